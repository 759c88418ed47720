"""Per-GPU memory of a serving job: weights, KV cache, forward workspace and fixed overhead, with
how many sequences the GPU holds."""

from __future__ import annotations

from dataclasses import replace

from service.core.job.spec import Job
from service.core.memory.breakdown import Estimate
from service.core.memory.serving import LLAMACPP, ServingBudget
from service.core.memory.serving_split import serving_share
from service.core.model.params import active_parameter_count, parameter_count


def serving_estimate(job: Job, budget: ServingBudget | None = None) -> Estimate:
    """Per GPU of one engine; with data-parallel replicas (GPUs past tp x pp), each serves its
    share of the sequences."""
    budget = budget or (LLAMACPP if job.framework == "llamacpp" else ServingBudget())
    replicas = job.parallel.dp
    share = serving_share(job if replicas <= 1 else replace(job, batch=-(-job.batch // replicas)),
                          job.parallel.tp, job.parallel.pp, budget, job.parallel.ep)
    details: dict[str, int | float] = {"kv_bytes_per_sequence": share.kv_per_sequence}
    if job.gpu is not None:
        capacity = job.gpu.memory_bytes_usable
        details["kv_budget_bytes"] = max(0, share.room(capacity))
        details["max_concurrent_sequences"] = share.max_sequences(capacity) * max(1, replicas)
        details["gpu_memory_utilization"] = share.memory_fraction
    scale = job.param_scale
    return Estimate(job=job, components=share.components,
                    params_total=round(parameter_count(job.arch) * scale),
                    params_active=round(active_parameter_count(job.arch) * scale),
                    params_trainable=0, details=details,
                    peak_phase="prefill" if job.framework == "hf" else "serving")
