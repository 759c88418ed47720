"""Training and fine-tuning plans: fewest GPUs of a type, or the best layout on given GPUs.

Fields the user stated (zero_stage, tp, pp, cp, ep, recompute, micro_batch, offload,
sequence_parallel) are kept; the planner chooses the rest. CPU offload is a last resort: it is
searched only when asked for, or as a fix when given GPUs fall short.
"""

from __future__ import annotations

from service.core.errors import InvalidInput
from service.core.hardware.gpus import Gpu
from service.core.job.request import EstimateRequest
from service.core.job.resolve import Resolved
from service.core.memory.estimate_job import compute_for
from service.core.memory.overhead import default_context_bytes
from service.core.planning.explain import alternatives, verdict, why_lines
from service.core.planning.fixes import fixes_for
from service.core.planning.layouts import (
    counts_ok,
)
from service.core.planning.plan_types import Plan
from service.core.planning.search import MAX_GPUS, CountResult, Searcher, fewest, states_lower_bound
from service.core.planning.search_setup import headroom, make_searcher
from service.core.units import gb

METHODS = ("planner", "seed_even_split")
# Notes from resolve() that describe the single-GPU request; the plan states its own.
REPLACED_NOTES = ("ZeRO stage 0", "micro-batch 1 per GPU", "activation profile",
                  "overhead:", "serving with tensor parallelism")


def given_gpus(request: EstimateRequest, resolved: Resolved) -> int | None:
    if request.gpu_count is None and request.nodes is None:
        return None
    return resolved.job.parallel.gpus


def search_fewest(searcher: Searcher) -> tuple[CountResult | None, CountResult | None]:
    lower = states_lower_bound(searcher.memory, searcher.budget)
    return fewest(searcher, lower)


def plan_training(request: EstimateRequest, resolved: Resolved, gpu: Gpu,
                  with_fixes: bool = True) -> Plan:
    """The fewest GPUs (no count given) or the best layout on the given count."""
    method = request.method or "planner"
    if method not in METHODS:
        raise InvalidInput("method", f"unknown method {method!r}", ", ".join(METHODS))
    searcher = make_searcher(request, resolved, gpu)
    count = given_gpus(request, resolved)
    plan = Plan(task=resolved.job.task, model_id=resolved.job.model_id, gpu_id=gpu.id,
                gpu_name=gpu.name, capacity_bytes=gpu.memory_bytes_usable,
                budget_bytes=searcher.budget, headroom=headroom(request),
                mode="fewest" if count is None else "given", fits=False)
    hit, miss = search_fewest(searcher)
    plan.min_gpus = hit.gpus if hit is not None else None
    chosen = hit if count is None else searcher.at(count)
    if count is not None and count > searcher.space.gpus_per_node \
            and not counts_ok(count, searcher.space.gpus_per_node):
        plan.assumptions.append(f"{count} GPUs is not whole {searcher.space.gpus_per_node}-GPU "
                                "nodes: TP groups stay inside the full nodes")
    if chosen is not None and chosen.best is not None:
        best = chosen.best
        plan.fits = True
        plan.gpus, plan.layout, plan.step_time = best.layout.gpus, best.layout, best.step_time
        plan.estimate = searcher.memory.estimate(best.layout)
        plan.why = why_lines(searcher, best, chosen, miss if count is None else None, plan)
        plan.alternatives = alternatives(searcher, best, chosen,
                                         miss if count is None else None)
        _compute(plan, request, resolved, searcher)
    else:
        plan.gpus = count
        if chosen is not None and chosen.leanest is not None:
            plan.shortfall_bytes = chosen.leanest.total_bytes - searcher.budget
            plan.layout = chosen.leanest.layout
            plan.estimate = searcher.memory.estimate(chosen.leanest.layout)
        elif count is not None:
            plan.why.append(f"no valid layout on {count} GPUs: the count does not factor into "
                            "dp x tp x pp x cp with the stated sizes and global batch")
        if with_fixes and count is not None:
            plan.fix, plan.other_fixes = fixes_for(request, resolved, gpu, count, plan)
        if count is None:
            plan.why.append(f"no layout fits on any number of {gpu.name} GPUs up to "
                            f"{MAX_GPUS:,}: more GPUs shard the model states away, but not one "
                            "sequence's activations, its logits and the backward's buffers")
            if miss is not None and miss.leanest is not None:
                plan.why.append(f"e.g. on {miss.gpus:,} GPUs the leanest layout "
                                f"({miss.leanest.layout.describe()}, "
                                f"{miss.leanest.layout.shape()}) needs "
                                f"{gb(miss.leanest.total_bytes)} per GPU")
    plan.assumptions = _assumptions(request, resolved, searcher, plan)
    plan.verdict = verdict(plan, gpu, searcher.space.gpus_per_node)
    return plan


def _compute(plan: Plan, request: EstimateRequest, resolved: Resolved,
             searcher: Searcher) -> None:
    if request.tokens is None or plan.layout is None:
        return
    job = searcher.memory.job(plan.layout)
    notes: list[str] = []
    plan.compute = compute_for(Resolved(job, resolved.model, notes), request)
    plan.compute_6nd = compute_for(Resolved(job, resolved.model, []), request, textbook=True)
    plan.assumptions.extend(notes)


def _assumptions(request: EstimateRequest, resolved: Resolved, searcher: Searcher,
                 plan: Plan) -> list[str]:
    space = searcher.space
    notes = [n for n in resolved.assumptions if not n.startswith(REPLACED_NOTES)]
    notes.append(f"plan to {plan.headroom:.0%} of usable memory: {gb(plan.budget_bytes)} of "
                 f"{gb(plan.capacity_bytes)} per GPU (room for fragmentation and spikes; "
                 "memory_headroom to change)")
    if plan.mode == "fewest":
        notes.append(f"GPU counts: powers of two inside one {space.gpus_per_node}-GPU node, "
                     "then whole nodes")
    if not space.global_batch:
        notes.append("global batch not stated: micro-batch 1 per data-parallel rank, no "
                     "accumulation; with pipeline parallelism 4 x pp micro-batches per step")
    if request.tp is None:
        notes.append(f"tensor parallelism only inside one NVLink domain ({space.nvlink_domain} "
                     "GPUs), with sequence parallelism")
    if request.activation_model is None:
        notes.append("activation profile: hf (Hugging Face modules) without model parallelism, "
                     "megatron (Megatron-LM/Transformer Engine) with TP or PP")
    if request.overhead_model in (None, "measured"):
        ctx = resolved.job.cuda_context_bytes if request.cuda_context_bytes is not None \
            else default_context_bytes(plan.gpus or 1)
        notes.append(f"overhead: CUDA context{' + NCCL' if (plan.gpus or 1) > 1 else ''} "
                     f"{ctx / (1 << 30):.1f} GiB + {resolved.job.allocator_reserve:.0%} "
                     "allocator reserve")
    if request.offload is None:
        notes.append("CPU offload only as a last resort (a fix when GPUs fall short)")
    notes.append("layouts ranked by a relative step-time model: recompute, pipeline bubble, "
                 "TP/CP/EP and ZeRO-3 communication, offload (step_time.py)")
    return notes + [n for n in plan.assumptions if n not in notes]
