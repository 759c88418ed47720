"""Build the answer's data from the resolved job, its estimate and the planner's plan."""

from __future__ import annotations

from dataclasses import replace
from functools import cache

from service.core.compute.time_cost import MFU_SPREAD, TimeAndCost, time_and_cost
from service.core.compute.training_time import ComputeEstimate
from service.core.hardware.gpus import Gpu, all_gpus
from service.core.job.assumptions import merge_assumptions
from service.core.job.resolve import ResolvedJob
from service.core.job.spec import Job
from service.core.launch.launch_configs import launch_configs
from service.core.memory.breakdown import Estimate
from service.core.memory.error_band import band_for
from service.core.planning.plan_types import Fix, Layout, Plan, ServingFit
from service.core.planning.stacks import stack_name
from service.core.report.answer_types import (
    AlternativeEntry,
    Answer,
    ComputeEntry,
    ErrorBandEntry,
    FitsOnEntry,
    FixEntry,
    FormulaEntry,
    LayoutEntry,
    LayoutFigures,
    PerGpuBytes,
    PlannerEntry,
    SeedCountEntry,
    ServingCostEntry,
)
from service.core.report.formula_text import component_values
from service.core.report.headline import answer_verdict, band_note, plan_verdict


def error_band(est: Estimate, capacity: int | None) -> ErrorBandEntry:
    band = band_for(est.job, est.total_bytes)
    return ErrorBandEntry(band.low_bytes, band.high_bytes,
                          band.verdict(capacity) if capacity is not None else None,
                          band.kind, band.runs, band.gpu, band.basis)


def per_gpu(est: Estimate) -> PerGpuBytes:
    return PerGpuBytes(**est.per_gpu_bytes)


def formula_entries(est: Estimate) -> list[FormulaEntry]:
    return [FormulaEntry(c.key, c.expression, c.term_map, c.bytes, c.source,
                         component_values(c.expression, c.terms), c.note)
            for c in est.components]


def job_layout(job: Job, per_node: int) -> LayoutEntry:
    par = job.parallel
    serving = job.task == "infer"
    return LayoutEntry(
        gpus=par.gpus, nodes=-(-par.gpus // per_node), dp=par.dp, tp=par.tp, pp=par.pp,
        cp=par.cp, ep=par.ep, zero_stage=par.zero_stage,
        sequence_parallel=par.sequence_parallel, recompute=job.recompute,
        micro_batch=job.micro_batch, grad_accum=job.grad_accum,
        global_batch=job.global_batch or None, offload=job.offload,
        context=job.seq_len if serving else None, sequences=job.batch if serving else None)


def _planned_layout(layout: Layout) -> LayoutEntry:
    return LayoutEntry(
        gpus=layout.gpus, nodes=layout.nodes, dp=layout.dp, tp=layout.tp, pp=layout.pp,
        cp=layout.cp, ep=layout.ep, zero_stage=layout.zero_stage,
        sequence_parallel=layout.sequence_parallel, recompute=layout.recompute,
        micro_batch=layout.micro_batch, grad_accum=layout.grad_accum,
        global_batch=layout.global_batch, offload=layout.offload)


def _serving_layout(fit: ServingFit, job: Job) -> LayoutEntry:
    return LayoutEntry(
        gpus=fit.gpus, nodes=fit.nodes, dp=fit.replicas, tp=fit.tp, pp=fit.pp, cp=1,
        ep=fit.replicas if fit.expert_parallel else 1,
        zero_stage=0,
        sequence_parallel=False, recompute="none", micro_batch=job.micro_batch, grad_accum=1,
        global_batch=None, offload="none", context=fit.context, sequences=fit.sequences,
        max_concurrent_sequences=fit.max_concurrent)


def plan_layout(plan: Plan) -> LayoutEntry | None:
    if plan.serving is not None and plan.estimate is not None:
        return _serving_layout(plan.serving, plan.estimate.job)
    if plan.layout is not None:
        return _planned_layout(plan.layout)
    return None


def compute_entry(c: ComputeEstimate | None, gpus: int,
                  assumed_mfu: bool = False) -> ComputeEntry | None:
    if c is None:
        return None
    days_range = [round(c.days / (1 + MFU_SPREAD), 4), round(c.days / (1 - MFU_SPREAD), 4)] \
        if assumed_mfu else None
    return ComputeEntry(c.flops_per_token, c.total_flops, c.seconds, c.days, c.gpu_hours, c.cost,
                        c.compute_optimal_tokens, c.formula, gpus, days_range)


def _figures(label: str, layout: LayoutEntry, est: Estimate) -> LayoutFigures:
    return LayoutFigures(label, layout, per_gpu(est), est.fits, formula_entries(est))


def planner_entry(plan: Plan) -> PlannerEntry:
    layout = plan_layout(plan)
    figures = (_figures("planner", layout, plan.estimate)
               if layout is not None and plan.estimate is not None else None)
    if figures is not None and plan.task == "infer":
        figures = LayoutFigures(figures.label, figures.plan, figures.per_gpu_bytes, plan.fits,
                                figures.formulas)
    return PlannerEntry(
        mode=plan.mode, fits=plan.fits, verdict=plan_verdict(plan), gpus=plan.gpus,
        min_gpus=plan.min_gpus, budget_bytes=plan.budget_bytes, headroom=plan.headroom,
        layout=figures,
        relative_step_time=round(plan.step_time, 4) if plan.step_time else None,
        step_terms={name: round(factor, 4) for name, factor in plan.step_terms if factor > 1.005},
        why=list(plan.why),
        alternatives=[AlternativeEntry(a.description, a.gpus, a.total_bytes, a.step_time,
                                       a.reason) for a in plan.alternatives],
        shortfall_bytes=plan.shortfall_bytes,
        fix=_fix(plan.fix), other_fixes=[f for f in map(_fix, plan.other_fixes) if f],
        seed_counts=[SeedCountEntry(s.label, s.gpus, not s.reasons, list(s.reasons))
                     for s in plan.seed_counts],
        stack=plan.stack, stack_name=stack_name(plan.stack, plan.task) if plan.stack else "")


def _fix(fix: Fix | None) -> FixEntry | None:
    if fix is None:
        return None
    return FixEntry(fix.change, fix.gpus, fix.gpu_id, fix.total_bytes, fix.note, fix.kind,
                    dict(fix.changes))


def _fits_on(plan: Plan | None) -> list[FitsOnEntry]:
    if plan is None:
        return []
    return [FitsOnEntry(r.gpu_id, r.gpu_name, r.gpus, r.nodes, r.layout, r.total_bytes,
                        r.budget_bytes, r.price_per_hour) for r in plan.fits_on]


HOURS_PER_MONTH = 730  # 8,760 hours a year / 12, the cloud providers' billing month


def serving_cost(resolved: ResolvedJob, plan: Plan | None) -> ServingCostEntry | None:
    """GPUs the serving plan uses x the stated price per GPU-hour, else the catalog's."""
    if plan is None or plan.serving is None or plan.gpu is None:
        return None
    return gpus_cost(plan.serving.gpus, plan.gpu, resolved.price_per_gpu_hour)


def gpus_cost(gpus: int, gpu: Gpu, stated: float | None) -> ServingCostEntry | None:
    """``gpus`` of ``gpu`` kept running: x the stated price per GPU-hour, else the catalog's
    on-demand price, per hour and per billing month (None: no price known)."""
    price = stated if stated is not None else gpu.price_per_gpu_hour_usd
    if price is None:
        return None
    per_hour = gpus * price
    return ServingCostEntry(gpus, price, stated is not None, round(per_hour, 2),
                            round(per_hour * HOURS_PER_MONTH, 2), HOURS_PER_MONTH)


def _engine_fits(est: Estimate) -> bool | None:
    """A vLLM or SGLang server fits when its budget (--gpu-memory-utilization) holds the
    sequences asked, not when the one-sequence total is under the card's memory: with 0.5 of an
    L4, Mistral-7B's 14.5 GB of weights alone are over and the engine does not start."""
    room = est.details.get("max_concurrent_sequences")
    if est.job.task != "infer" or est.job.framework not in ("vllm", "sglang") or room is None:
        return est.fits
    return room >= est.job.batch


def build_answer(resolved: ResolvedJob, est: Estimate, plan: Plan | None) -> Answer:
    """The answer's data (see ``Answer`` for which layout the top-level figures describe)."""
    job = resolved.job
    per_node = plan.gpus_per_node if plan is not None and plan.mode != "catalog" \
        else resolved.gpus_per_node
    stated_layout = job_layout(job, per_node)
    room = est.details.get("max_concurrent_sequences")
    if job.task == "infer" and isinstance(room, int | float):  # the stated layout's own room
        stated_layout = replace(stated_layout, max_concurrent_sequences=int(room))
    shown, layout, fits = est, stated_layout, _engine_fits(est)
    as_stated: LayoutFigures | None = None
    planned = plan is not None and plan.estimate is not None and (
        plan.mode == "fewest"
        # given GPUs and no layout stated: the request's own layout is fitcheck's defaults,
        # so the top level is the planner's layout there, as the verdict is; and where the
        # stated layout does not fit and the planner's on the same GPUs does, the verdict is
        # the planner's, and so is the top level (a tool reading ``fits`` reads the verdict)
        or (plan.mode == "given" and job.task != "infer"
            and (not resolved.layout_stated or (not est.fits and plan.fits))))
    if planned and plan is not None and plan.estimate is not None:
        shown, fits = plan.estimate, plan.fits
        layout = plan_layout(plan) or stated_layout
        as_stated = _figures("as stated", stated_layout, est)
    # the time is the verdict's layout's: the planner's where it answers (fewest GPUs, or given
    # GPUs where the stated layout does not fit or none was stated), with its recompute
    stated_fits = bool(est.fits) and job.task != "infer" and resolved.layout_stated
    replanned = plan is not None and plan.mode == "given" and not stated_fits \
        and plan.compute is not None
    time: TimeAndCost | None = None
    if job.task != "infer":
        time = plan.compute if (planned or replanned) and plan is not None \
            else time_and_cost(resolved, job)
    assumptions = merge_assumptions(resolved.assumptions,
                                    plan.assumptions if plan is not None else (),
                                    time.assumptions if time is not None else ())
    gpus = layout.gpus
    gpu = job.gpu
    capacity = plan.capacity_bytes if planned and plan is not None else est.capacity_bytes
    # the band goes with the verdict: on given GPUs where the stated layout does not fit, or
    # where no layout was stated (the job's is fitcheck's defaults), the verdict is the
    # planner's layout on them (headline.answer_verdict)
    judged = plan.estimate if plan is not None and plan.mode == "given" \
        and plan.estimate is not None and not stated_fits else shown
    band = error_band(judged, capacity)
    return Answer(
        model=job.model_id, model_name=resolved.model.description, task=job.task,
        params_total=est.params_total, params_active=est.params_active,
        params_trainable=est.params_trainable,
        gpu=gpu.id if gpu else None, gpu_name=gpu.name if gpu else None,
        gpu_usable_bytes=capacity, per_gpu_bytes=per_gpu(shown), fits=fits,
        headroom_bytes=capacity - shown.total_bytes if capacity is not None else None,
        error_band=band, verdict=answer_verdict(est, plan, stated_fits) + band_note(
            band.low_bytes, band.high_bytes, band.verdict, capacity),
        min_gpus=plan.min_gpus if plan is not None and plan.mode != "catalog" else None,
        plan=layout, peak_phase=shown.peak_phase, cpu_offload_bytes=shown.cpu_offload_bytes,
        formulas=formula_entries(shown), assumptions=list(assumptions),
        details=dict(shown.details),
        compute=compute_entry(time.full, gpus, time.mfu_assumed) if time else None,
        compute_6nd=compute_entry(time.textbook, gpus) if time else None,
        as_stated=as_stated,
        planner=planner_entry(plan) if plan is not None and plan.mode != "catalog" else None,
        fits_on=_fits_on(plan),
        launch=launch_configs(resolved, plan, stated_fits)
        if (plan is None and est.total_bytes <= _largest_gpu_bytes())
        or (plan is not None and plan.mode != "catalog") else {},
        serving_cost=serving_cost(resolved, plan) if job.task == "infer" else None)


@cache
def _largest_gpu_bytes() -> int:
    """The most usable memory of any GPU in the catalog: a stated layout needing more per GPU
    gets no launch config (with no GPU named, it fits none)."""
    return max(g.memory_bytes_usable for g in all_gpus())
