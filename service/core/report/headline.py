"""The one-line verdict of an estimate or a plan: what a person reads first."""

from __future__ import annotations

from service.core.job.resolve import LAYOUT_KNOBS
from service.core.memory.breakdown import Estimate
from service.core.planning.plan_types import Plan, ServingFit
from service.core.report.answer_types import Answer, LayoutFigures
from service.core.units import counted, gb, gb_and_gib

WHAT = {"train": "training", "finetune": "fine-tuning", "infer": "serving"}


def gpus_phrase(gpus: int, name: str, per_node: int) -> str:
    nodes = -(-gpus // per_node)
    where = f" ({nodes} nodes of {per_node})" if nodes > 1 else ""
    return f"{gpus}x {name}{where}"


def estimate_verdict(est: Estimate) -> str:
    """'llama-3-8b training on 1 GPU: 161.4 GB (150.3 GiB) per GPU; does not fit ...'."""
    par = est.job.parallel
    setup = f"{par.gpus} GPU" + ("s" if par.gpus != 1 else "")
    if est.task != "infer" and par.zero_stage:
        setup += f", ZeRO-{par.zero_stage}"
    head = f"{est.model_id} {WHAT[est.task]} on {setup}: {gb_and_gib(est.total_bytes)} per GPU"
    capacity, gpu = est.capacity_bytes, est.job.gpu
    if capacity is None or gpu is None:
        return head + " (no GPU chosen)"
    room = capacity - est.total_bytes
    if room >= 0:
        return head + f"; fits {gpu.name} ({gb(capacity)} usable, {gb(room)} spare)"
    return head + f"; does not fit {gpu.name}: {gb(-room)} over its {gb(capacity)}"


def _serving_verdict(plan: Plan, fit: ServingFit | None) -> str:
    what = f"{fit.context if fit else 0:,} tokens x {fit.sequences if fit else 0:,} sequence" \
        + ("s" if fit and fit.sequences > 1 else "")
    name = plan.gpu_name
    if fit is None:
        return f"Cannot serve {plan.model_id} on {plan.gpus or 'any number of'} {name} GPUs: " \
               "no valid tensor/pipeline split"
    shape = fit.shape()
    where = f"{fit.gpus}x {name}" + (f" ({fit.nodes} nodes)" if fit.nodes > 1 else "")
    cap = plan.estimate.job.max_num_seqs if plan.estimate is not None else 0
    if fit.fits and cap and fit.sequences == 1:  # a pasted --max-num-seqs: a cap, not a need
        return f"Starts {plan.model_id} on {where} ({shape}): room for " \
               f"{counted(fit.max_concurrent, 'sequence')} at the full {fit.context:,} tokens " \
               f"of the {cap:,} --max-num-seqs allows; more when they are shorter, and past " \
               "that the engine queues new requests (vLLM preempts)"
    if fit.fits:
        return f"Serves {plan.model_id} at {what} on {where} ({shape}); up to " \
               f"{counted(fit.max_concurrent, 'concurrent sequence')} at {fit.context:,} tokens"
    split = f" ({plan.min_shape})" if plan.min_shape else ""
    more = f"; fewest that fit: {plan.min_gpus}{split}" if plan.min_gpus else ""
    if cap and fit.sequences == 1:  # the engine checks one full-length sequence at start
        return f"Does not start {plan.model_id} on {where} ({shape}): its memory budget holds " \
               f"no {fit.context:,}-token sequence{more}"
    return f"Does not serve {what} on {where} ({shape}): room for " \
           f"{counted(fit.max_concurrent, 'sequence')}{more}"


def _catalog_verdict(plan: Plan) -> str:
    priced = [r for r in plan.fits_on if r.price_per_hour is not None]
    fitting = [r for r in plan.fits_on if r.gpus is not None]
    if priced:
        cheap = min(priced, key=lambda r: r.price_per_hour or 0.0)
        return (f"No GPU given. Cheapest per hour: {cheap.gpus}x {cheap.gpu_name} "
                f"(~${cheap.price_per_hour:,.2f}/h at catalog prices)")
    if fitting:
        least = min(fitting, key=lambda r: r.gpus or 0)
        return f"No GPU given. Fewest GPUs: {least.gpus}x {least.gpu_name}"
    return "Does not fit on any GPU in the catalog"


def plan_verdict(plan: Plan) -> str:
    """'Fits on 4x NVIDIA A100 40GB SXM with ZeRO-3 + full recompute, micro-batch 1', ..."""
    if plan.mode == "catalog":
        return _catalog_verdict(plan)
    if plan.task == "infer":
        return _serving_verdict(plan, plan.serving)
    name = plan.gpu_name
    if plan.fits and plan.layout is not None and plan.gpus is not None:
        return (f"Fits on {gpus_phrase(plan.gpus, name, plan.gpus_per_node)} with "
                f"{plan.layout.describe()}")
    if plan.mode == "given" and plan.gpus is not None:
        short = (f": needs {gb(plan.budget_bytes + plan.shortfall_bytes)} per GPU at the "
                 f"leanest layout, the budget is {gb(plan.budget_bytes)} "
                 f"({gb(plan.shortfall_bytes)} short)"
                 if plan.shortfall_bytes is not None else ": no valid layout")
        same_gpus = plan.fix is not None and plan.fix.kind == "knob" and plan.fix.gpus == plan.gpus
        # a change on the same GPUs makes it fit (micro-batch 1, QLoRA...): not a dead end
        return (f"Does not fit on {gpus_phrase(plan.gpus, name, plan.gpus_per_node)}{short}"
                + (FIX_BELOW if same_gpus else ""))
    return f"Does not fit on any number of {name} GPUs"


FIX_BELOW = "; it fits there with the fix below"  # a comparison, which shows no fixes, drops it


def answer_verdict(est: Estimate, plan: Plan | None, stated_fits: bool) -> str:
    """One headline for the whole answer.

    Given GPUs: the stated layout's outcome (``stated_fits``: the user set a layout and it
    fits), else the planner's best layout on those GPUs; fewest GPUs: the planner's verdict;
    no GPU: the estimate's."""
    if plan is None:
        return estimate_verdict(est)
    if plan.mode == "catalog":
        return f"{estimate_verdict(est)}. {plan_verdict(plan)}"
    if plan.mode == "given" and stated_fits and plan.task != "infer":
        over = f", over its {plan.headroom:.0%} planning budget of {gb(plan.budget_bytes)}" \
            if est.total_bytes > plan.budget_bytes else ""
        return (f"Fits as stated on {gpus_phrase(est.job.parallel.gpus, plan.gpu_name, plan.gpus_per_node)}"
                f": {gb(est.total_bytes)} of {gb(plan.capacity_bytes)} usable per GPU{over}")
    return plan_verdict(plan)


def fix_label(answer: Answer) -> str:
    """'Fix' for a layout that does not fit; 'For more room' where the request's own layout fits
    the GPU and the planner's fixes only win back the planning budget's headroom."""
    return "For more room" if answer.verdict.startswith("Fits as stated") else "Fix"


def band_note(low: int, high: int, verdict: str | None, capacity: int | None) -> str:
    """' (borderline: likely 38.1-44.0 GB against 42.3 GB usable)' when the band straddles."""
    if verdict != "borderline" or capacity is None:
        return ""
    return (f" (borderline: likely {low / 1e9:,.1f}-{high / 1e9:,.1f} GB against "
            f"{gb(capacity)} usable)")


def speaks_of_planner(answer: Answer) -> bool:
    """True when GPUs were given and the verdict is the planner's layout on them (training: the
    stated layout does not fit, or none was stated; serving), not the top-level figures (the
    request as stated on them)."""
    planner = answer.planner
    return (planner is not None and planner.mode == "given"
            and answer.verdict.startswith(planner.verdict))


def top_figures(answer: Answer) -> LayoutFigures:
    """The layout the top level describes, and its figures (``Answer`` says which)."""
    return LayoutFigures("top", answer.plan, answer.per_gpu_bytes, answer.fits, answer.formulas)


def own_figures(answer: Answer) -> LayoutFigures:
    """The request's own layout on its GPUs and its figures: ``as_stated`` where the top level is
    the planner's, else the top level."""
    return answer.as_stated if answer.as_stated is not None else top_figures(answer)


def own_layout_label(answer: Answer) -> str:
    """What to call the request's own layout: 'As stated' when the user set any of it, else
    'Default layout' (fitcheck's defaults, not the user's choice)."""
    said = any(a.origin == "stated" and a.field in LAYOUT_KNOBS for a in answer.assumptions)
    return "As stated" if said else "Default layout"
