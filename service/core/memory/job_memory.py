"""The memory estimate of any job: training and fine-tuning, or serving."""

from __future__ import annotations

from service.core.job.spec import Job
from service.core.memory.breakdown import Estimate
from service.core.memory.serving_memory import serving_estimate
from service.core.memory.training_memory import training_estimate


def estimate(job: Job) -> Estimate:
    """Per-GPU memory of the job on its own layout."""
    return serving_estimate(job) if job.task == "infer" else training_estimate(job)
