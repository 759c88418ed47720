"""Entry points: a plan for a request, and an estimate with the planner's answer beside it.

``make_plan``: training/fine-tuning (``train_plan.py``) or serving (``serving_plan.py``) on the
request's GPU type, the S3 seed's counts when ``method`` is ``seed_even_split``, and optionally
the fits-on table across the catalog. Without a GPU type the plan is the fits-on table alone.
"""

from __future__ import annotations

from service.core.job.request import EstimateRequest
from service.core.job.resolve import Resolved, resolve
from service.core.planning.fits_on import fits_on_serving, fits_on_training
from service.core.planning.plan_types import DEFAULT_HEADROOM, FitsOnRow, Plan
from service.core.planning.search_setup import per_node
from service.core.planning.seed_plan import seed_counts
from service.core.planning.serving_plan import plan_serving
from service.core.planning.train_plan import REPLACED_NOTES, plan_training


def make_plan(request: EstimateRequest, fits_on: bool = False) -> Plan:
    """The planner's answer for the request (see module docstring)."""
    resolved = resolve(request)
    gpu = resolved.job.gpu
    infer = resolved.job.task == "infer"
    if gpu is None:
        return _catalog_plan(request, resolved, infer)
    if infer:
        plan = plan_serving(request, resolved, gpu)
    else:
        plan = plan_training(request, resolved, gpu)
        if request.method == "seed_even_split":
            plan.seed_counts = seed_counts(request, resolved, gpu, per_node(request, gpu))
    if fits_on:
        plan.fits_on = _fits_on(request, resolved, infer)
    return plan


def _fits_on(request: EstimateRequest, resolved: Resolved, infer: bool) -> list[FitsOnRow]:
    if infer:
        return fits_on_serving(request, resolved)
    return fits_on_training(request, resolved)


def _catalog_plan(request: EstimateRequest, resolved: Resolved, infer: bool) -> Plan:
    rows = _fits_on(request, resolved, infer)
    job = resolved.job
    plan = Plan(task=job.task, model_id=job.model_id, gpu_id="", gpu_name="", capacity_bytes=0,
                budget_bytes=0, headroom=request.memory_headroom or DEFAULT_HEADROOM,
                mode="catalog", fits=any(r.gpus is not None for r in rows), fits_on=rows,
                assumptions=[n for n in resolved.assumptions if not n.startswith(REPLACED_NOTES)])
    plan.assumptions.append("each GPU type: the fewest GPUs (one node's powers of two, then "
                            "whole nodes) and the fastest layout there, within the budget of "
                            + ("vLLM's memory utilisation" if infer else
                               f"{plan.headroom:.0%} of usable memory"))
    priced = [r for r in rows if r.price_per_hour is not None]
    fewest = [r for r in rows if r.gpus is not None]
    if priced:
        cheap = min(priced, key=lambda r: r.price_per_hour or 0.0)
        plan.verdict = (f"No GPU given. Cheapest per hour: {cheap.gpus}x {cheap.gpu_name} "
                        f"(~${cheap.price_per_hour:,.2f}/h at catalog prices)")
    elif fewest:
        least = min(fewest, key=lambda r: r.gpus or 0)
        plan.verdict = f"No GPU given. Fewest GPUs: {least.gpus}x {least.gpu_name}"
    else:
        plan.verdict = "Does not fit on any GPU in the catalog"
    return plan
