"""Memory someone saw in use, set beside what the answer says it should be ("~73GB used per GPU
on our vLLM deployment, is it leaking?", held-out set 28: the reply had led with 19 GB for the
model and never said that vLLM reserves its share of the GPU at start).

- A serving engine that reserves its KV pool up front (vLLM, SGLang) takes its memory share of
  every GPU at start: nvidia-smi shows that share whatever the load (vLLM
  ``gpu_memory_utilization``: the fraction of the GPU's total memory the instance may use).
- Training: PyTorch's caching allocator keeps what it reserved at the peak (nvidia-smi shows
  reserved memory plus the CUDA context), so the comparison is with the estimate's band.
"""

from __future__ import annotations

from service.core.report.answer_types import Answer
from service.core.units import gb, gib

PREALLOCATING = {"vllm": "vLLM", "sglang": "SGLang"}
CLOSE = 0.08  # a reading within 8% of the reservation, in GB or GiB (nvidia-smi shows MiB)


def observed_line(observed_gb: float, answer: Answer) -> str | None:
    seen = f"{observed_gb:g} GB"
    if answer.task == "infer":
        engine = PREALLOCATING.get(answer.planner.stack if answer.planner is not None else "")
        share = answer.details.get("gpu_memory_utilization")
        if engine is None or not isinstance(share, float) or answer.gpu_usable_bytes is None:
            return None
        reserved = share * answer.gpu_usable_bytes
        flag = "--gpu-memory-utilization" if engine == "vLLM" else "--mem-fraction-static"
        what = (f"{engine} takes {flag} ({share:.0%}) of each GPU's memory at start, "
                f"{gb(round(reserved))} ({gib(round(reserved))}), and fills what the weights leave "
                "with KV cache blocks, however many requests are running")
        if any(abs(observed_gb * unit / reserved - 1) <= CLOSE for unit in (1e9, 2**30)):
            return f"{seen} in use per GPU is expected, not a leak: {what}."
        if observed_gb * 1e9 > reserved * (1 + CLOSE):
            return (f"{seen} is more than {engine}'s reservation: {what}; more than that is "
                    "another process on the GPU or a larger share than the default.")
        return f"{seen} is less than {engine}'s default reservation: {what}."
    band = answer.error_band
    low, high = band.low_bytes / 1e9, band.high_bytes / 1e9
    if low <= observed_gb <= high * (1 + CLOSE):
        return (f"{seen} in use is within this estimate's likely range ({low:,.1f}-{high:,.1f} GB "
                "per GPU): PyTorch's allocator keeps what it reserved at the peak, and nvidia-smi "
                "shows that plus the CUDA context.")
    if observed_gb > high:
        return (f"{seen} in use is above this estimate's likely range ({low:,.1f}-{high:,.1f} GB "
                "per GPU): check the settings below against the run's (micro-batch, sequence "
                "length, recompute, sharding), or a second process on the GPU.")
    return (f"{seen} in use is below this estimate's likely range ({low:,.1f}-{high:,.1f} GB "
            "per GPU): the run's settings are leaner than those assumed below.")
