"""Training time and cost of a resolved job on its GPUs, with what was assumed."""

from __future__ import annotations

from dataclasses import dataclass

from service.core.compute.training_time import ComputeEstimate, training_time
from service.core.hardware.gpus import find_gpu, peak_flops
from service.core.job.assumptions import Assumption, default, stated
from service.core.job.resolve import ResolvedJob
from service.core.job.spec import Job
from service.core.model.adapter_params import lora_params
from service.core.model.params import active_parameter_count

DEFAULT_TIME_GPU = "h100-80gb"


@dataclass(frozen=True, slots=True)
class TimeAndCost:
    """Time and cost with the attention term and recompute, the textbook 6ND beside it, and
    the assumptions both rest on."""

    full: ComputeEstimate
    textbook: ComputeEstimate
    assumptions: tuple[Assumption, ...]


def time_and_cost(resolved: ResolvedJob, job: Job) -> TimeAndCost | None:
    """None without ``tokens``. ``job``: the layout that runs (its GPU count and recompute)."""
    if resolved.tokens is None:
        return None
    notes: list[Assumption] = [stated("tokens", resolved.tokens)]
    gpu = job.gpu
    if gpu is None:
        gpu = find_gpu(DEFAULT_TIME_GPU)
        notes.append(default("gpu", gpu.id, "time on a common training GPU (no GPU given)"))
    peak_precision = {"fp8": "fp8", "fp32": "tf32"}.get(job.precision, "bf16")
    mfu = resolved.mfu
    if mfu is None:
        mfu = gpu.default_mfu
        notes.append(default("mfu", mfu, f"typical for the {gpu.name}", gpu.mfu_note))
    else:
        notes.append(stated("mfu", mfu))
    price = resolved.price_per_gpu_hour
    if price is None:
        price = gpu.price_per_gpu_hour_usd
        if price is not None:
            notes.append(default("price_per_gpu_hour", price, "catalog on-demand price",
                                 gpu.price_note))
    else:
        notes.append(stated("price_per_gpu_hour", price))
    active = active_parameter_count(job.arch) * job.param_scale
    # adapters: only they get weight gradients (the textbook 6ND beside it stays 6ND)
    trainable = None if job.trains_all_weights else float(
        lora_params(job.arch, job.lora_rank, job.lora_targets))
    peak = peak_flops(gpu, peak_precision)

    def run(textbook: bool) -> ComputeEstimate:
        return training_time(params_active=active, tokens=resolved.tokens or 0.0,
                             gpus=job.parallel.gpus, peak_flops=peak, mfu=mfu, arch=job.arch,
                             seq_len=job.seq_len, price_per_gpu_hour=price,
                             full_recompute=job.recompute == "full" and not textbook,
                             include_attention=not textbook,
                             trainable=None if textbook else trainable)

    return TimeAndCost(run(textbook=False), run(textbook=True), tuple(notes))
