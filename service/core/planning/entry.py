"""The planner's entry point: a plan for a resolved job.

Training/fine-tuning (``train_plan.py``) or serving (``serving_plan.py``) on the job's GPU type,
the S3 seed's counts when ``method`` is ``seed_even_split``, and optionally the fits-on table
across the catalog. Without a GPU type the plan is the fits-on table alone (mode ``catalog``).
"""

from __future__ import annotations

from dataclasses import replace

from service.core.hardware.fleet import fleet_gpus
from service.core.hardware.gpus import Gpu
from service.core.job.assumptions import default
from service.core.job.resolve import ResolvedJob
from service.core.planning.fits_on import fits_on
from service.core.planning.plan_types import Plan
from service.core.planning.search_setup import per_node
from service.core.planning.seed_plan import seed_counts
from service.core.planning.serving_plan import plan_serving
from service.core.planning.train_plan import plan_training


def make_plan(resolved: ResolvedJob, with_fits_on: bool = False,
              fleet: tuple[Gpu, ...] | None = None) -> Plan:
    """The planner's answer for the resolved job (see module docstring); ``fleet``: the GPU
    types a fix may move to (the default fleet when None)."""
    gpu = resolved.job.gpu
    if gpu is None:
        return catalog_plan(resolved)
    team = fleet_gpus() if fleet is None else fleet
    if resolved.job.task == "infer":
        plan = plan_serving(resolved, gpu, team)
    else:
        plan = plan_training(resolved, gpu, team)
        if resolved.method == "seed_even_split":
            plan = replace(plan, seed_counts=tuple(seed_counts(resolved, gpu,
                                                               per_node(resolved, gpu))))
    if with_fits_on:
        plan = replace(plan, fits_on=tuple(fits_on(resolved)))
    return plan


def catalog_plan(resolved: ResolvedJob) -> Plan:
    """No GPU type named: the fewest GPUs of every type in the catalog."""
    rows = tuple(fits_on(resolved))
    infer = resolved.job.task == "infer"
    budget = "vLLM's memory utilisation" if infer else f"{resolved.headroom:.0%} of usable memory"
    note = default("gpu", "every catalog GPU", "each GPU type: the fewest GPUs (one node's powers "
                   "of two, then whole nodes) and the fastest layout there, within " + budget)
    return Plan(task=resolved.job.task, model_id=resolved.job.model_id, gpu=None,
                capacity_bytes=0, budget_bytes=0, headroom=resolved.headroom, mode="catalog",
                fits=any(r.gpus is not None for r in rows), fits_on=rows,
                assumptions=(note,))
