"""Per-GPU memory of a serving job: weights, KV cache, forward workspace and fixed overhead, with
how many sequences the GPU's KV budget holds."""

from __future__ import annotations

from service.core.job.spec import Job
from service.core.memory.breakdown import Estimate
from service.core.memory.serving import ServingBudget, kv_budget_bytes, max_concurrent_sequences
from service.core.memory.serving_split import serving_share
from service.core.model.params import active_parameter_count, parameter_count


def serving_estimate(job: Job, budget: ServingBudget | None = None) -> Estimate:
    budget = budget or ServingBudget()
    share = serving_share(job, job.parallel.tp, job.parallel.pp, budget)
    details: dict[str, int | float] = {"kv_bytes_per_sequence": share.kv_per_sequence}
    if job.gpu is not None:
        kv_budget = kv_budget_bytes(job.gpu.memory_bytes_usable, share.weights.bytes,
                                    share.workspace.bytes, budget)
        details["kv_budget_bytes"] = max(0, kv_budget)
        details["max_concurrent_sequences"] = max_concurrent_sequences(kv_budget,
                                                                       share.kv_per_sequence)
        details["gpu_memory_utilization"] = budget.memory_fraction
    scale = job.param_scale
    return Estimate(job=job, components=share.components,
                    params_total=round(parameter_count(job.arch) * scale),
                    params_active=round(active_parameter_count(job.arch) * scale),
                    params_trainable=0, details=details)
