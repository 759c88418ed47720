"""The memory estimate of any job: training and fine-tuning, or serving."""

from __future__ import annotations

from service.core.job.spec import Job
from service.core.memory.breakdown import Estimate
from service.core.memory.serving import ServingBudget
from service.core.memory.serving_memory import serving_estimate
from service.core.memory.training_memory import training_estimate


def estimate(job: Job, serving_budget: ServingBudget | None = None) -> Estimate:
    """Per-GPU memory of the job on its own layout; a serving job's sequences are counted
    against ``serving_budget`` (the engine's default when None)."""
    return serving_estimate(job, serving_budget) if job.task == "infer" \
        else training_estimate(job)
