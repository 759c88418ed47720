"""Lines that lead a reply because they are what was asked.

Memory someone saw in use, set beside what the answer says it should be ("~73GB used per GPU
on our vLLM deployment, is it leaking?", held-out set 28: the reply had led with 19 GB for the
model and never said that vLLM reserves its share of the GPU at start); the KV cache per token
("what's the kv cache per token for llama 3 70b", held-out set 29: it had been a detail under a
headline about something else).

- A serving engine that reserves its KV pool up front (vLLM, SGLang) takes its memory share of
  every GPU at start: nvidia-smi shows that share whatever the load (vLLM
  ``gpu_memory_utilization``: the fraction of the GPU's total memory the instance may use).
- Training: PyTorch's caching allocator keeps what it reserved at the peak (nvidia-smi shows
  reserved memory plus the CUDA context), so the comparison is with the estimate's band.
"""

from __future__ import annotations

from service.core.report.answer_types import Answer
from service.core.units import gb, gib
from service.render.slack_reply import PREALLOCATING

# nvidia-smi shows MiB and people say "GB" of either: a reading within the GB/GiB gap (7.4%) of
# a figure, in either unit, is that figure
CLOSE = 2**30 / 1e9 - 1
UNITS = (1e9, 2**30)


def kv_line(answer: Answer) -> str | None:
    """"What's the KV cache per token?": the whole model's figure and one sequence's, first
    (the kv_cache formula's own terms)."""
    found = next((f for f in answer.formulas if f.component == "kv_cache"), None)
    per_token = found.terms.get("kv_bytes_per_token") if found is not None else None
    context = found.terms.get("context") if found is not None else None
    if not isinstance(per_token, int | float) or not isinstance(context, int | float):
        return None
    return (f"KV cache: *{per_token / 1e3:,.1f} KB per token* for the whole model "
            f"({answer.model}: {gb(round(per_token * context))} per {context:,.0f}-token "
            "sequence).")


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
        if any(abs(observed_gb * unit / reserved - 1) <= CLOSE for unit in UNITS):
            return f"{seen} in use per GPU is expected, not a leak: {what}."
        if observed_gb * 1e9 > reserved * (1 + CLOSE):
            return (f"{seen} is more than {engine}'s reservation: {what}; more than that is "
                    "another process on the GPU or a larger share than the default.")
        return f"{seen} is less than {engine}'s default reservation: {what}."
    band = answer.error_band
    # the run the user described: the request's own layout where the planner's leads the answer
    own = answer.as_stated.per_gpu_bytes.total if answer.as_stated is not None \
        else answer.per_gpu_bytes.total
    scale = own / answer.per_gpu_bytes.total if answer.per_gpu_bytes.total else 1.0
    low, high = band.low_bytes * scale, band.high_bytes * scale
    seen_bytes = [observed_gb * unit for unit in UNITS]
    span = f"({low / 1e9:,.1f}-{high / 1e9:,.1f} GB per GPU{' as written' if scale != 1.0 else ''})"
    if any(low * (1 - CLOSE) <= b <= high * (1 + CLOSE) for b in seen_bytes):
        return (f"{seen} in use is within this estimate's likely range {span}: PyTorch's "
                "allocator keeps what it reserved at the peak, and nvidia-smi shows that plus the "
                "CUDA context.")
    if min(seen_bytes) > high:
        return (f"{seen} in use is above this estimate's likely range {span}: check the settings "
                "below against the run's (micro-batch, sequence length, recompute, sharding), or "
                "a second process on the GPU.")
    if own > (answer.gpu_usable_bytes or own + 1):  # the run as written cannot fit: an OOM
        return (f"{seen} in use, then out of memory, is what the run as written does: it needs "
                f"{own / 1e9:,.1f} GB per GPU {span}, more than the GPU holds; the layout below "
                "fits.")
    return (f"{seen} in use is below this estimate's likely range {span}: the run's settings "
            "are leaner than those assumed below.")
