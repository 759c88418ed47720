"""Training and fine-tuning plans: fewest GPUs of a type, or the best layout on given GPUs.

Fields the user stated (zero_stage, tp, pp, cp, ep, recompute, micro_batch, offload,
sequence_parallel) are kept; the planner chooses the rest. CPU offload is a last resort: it is
searched only when asked for, or as a fix when given GPUs fall short.
"""

from __future__ import annotations

from dataclasses import replace

from service.core.compute.time_cost import time_and_cost
from service.core.hardware.gpus import Gpu
from service.core.job.assumptions import Assumption, default, derived, said_or_default
from service.core.job.resolve import ResolvedJob
from service.core.memory.breakdown import Estimate
from service.core.memory.transients import LOSS_SOURCE
from service.core.planning.explain import alternatives, why_lines
from service.core.planning.fixes import chunking_helps, fixes_for
from service.core.planning.layouts import counts_ok
from service.core.planning.plan_types import Layout, Plan
from service.core.planning.search import MAX_GPUS, CountResult, Searcher, fewest, states_lower_bound
from service.core.planning.search_setup import make_searcher
from service.core.planning.stacks import layout_stack, stack_assumption
from service.core.units import gb


def search_fewest(searcher: Searcher) -> tuple[CountResult | None, CountResult | None]:
    lower = states_lower_bound(searcher.memory, searcher.budget)
    return fewest(searcher, lower)


def plan_training(resolved: ResolvedJob, gpu: Gpu, fleet: tuple[Gpu, ...] = (),
                  with_fixes: bool = True) -> Plan:
    """The fewest GPUs (no count given) or the best layout on the given count; ``fleet``: the
    GPU types a fix may move to."""
    searcher = make_searcher(resolved, gpu)
    count = resolved.given_gpus
    hit, miss = search_fewest(searcher)
    chosen = hit if count is None else searcher.at(count)
    per_node = searcher.space.gpus_per_node
    notes = list(_assumptions(resolved, searcher, count is None))
    if count is not None and count > per_node and not counts_ok(count, per_node):
        notes.append(derived("gpu_count", count, f"not whole {per_node}-GPU nodes: TP groups "
                             "stay inside the full nodes"))
    base = Plan(task=resolved.job.task, model_id=resolved.job.model_id, gpu=gpu,
                capacity_bytes=gpu.memory_bytes_usable, budget_bytes=searcher.budget,
                headroom=resolved.headroom, mode="fewest" if count is None else "given",
                fits=False, gpus_per_node=per_node,
                min_gpus=hit.gpus if hit is not None else None)
    if chosen is not None and chosen.best is not None:
        best = chosen.best
        estimate = searcher.memory.estimate(best.layout)
        compute = time_and_cost(resolved, estimate.job)
        if compute is not None:
            notes += compute.assumptions
        if count is None:
            notes += _chosen(resolved, best.layout, estimate.job.activation_model)
        stack = layout_stack(resolved, best.layout)
        notes += [a for a in (stack_assumption(resolved, stack),) if a is not None]
        return replace(base, fits=True, gpus=best.layout.gpus, layout=best.layout,
                    stack=stack,
                    step_time=best.step_time, step_terms=best.step_terms, estimate=estimate,
                    why=tuple(why_lines(searcher, best, chosen, miss if count is None else None,
                                        estimate, count is None)),
                    alternatives=tuple(alternatives(searcher, best, chosen,
                                                    miss if count is None else None)),
                    compute=compute, assumptions=tuple(notes))
    why: list[str] = []
    lean = chosen.leanest if chosen is not None else None
    if lean is None and count is not None:
        why.append(f"no valid layout on {count} GPUs: the count does not factor into "
                   "dp x tp x pp x cp with the stated sizes and global batch")
    if count is None:
        why.append(f"no layout fits on any number of {gpu.name} GPUs up to {MAX_GPUS:,}: more "
                   "GPUs shard the model states away, but not one sequence's activations, its "
                   "logits and the backward's buffers")
        if miss is not None and miss.leanest is not None:
            why.append(f"e.g. on {miss.gpus:,} GPUs the leanest layout "
                       f"({miss.leanest.layout.describe()}, {miss.leanest.layout.shape()}) "
                       f"needs {gb(miss.leanest.total_bytes)} per GPU")
    # no count fits: the fixes are worked out on one GPU ("bs 8 seq 2048" LoRA of a 3B on an
    # A10G: micro-batch 1 with accumulation fits there), the smallest place to change the job
    fixed_on = count if count is not None else 1
    if count is None:
        lean = lean or searcher.at(1).leanest
    lean_estimate = searcher.memory.estimate(lean.layout) if lean is not None else None
    shortfall = lean.total_bytes - searcher.budget if lean is not None else None
    fix, others = (fixes_for(resolved, gpu, fixed_on, hit.gpus if hit is not None else None,
                             fleet, chunking_helps(logits_bytes(lean_estimate), searcher.budget,
                                                   shortfall))
                   if with_fixes else (None, ()))
    stack = layout_stack(resolved, lean.layout) if lean is not None else ""
    if stack:
        notes += [a for a in (stack_assumption(resolved, stack),) if a is not None]
    # a time question on GPUs the job does not fit yet: the time of its leanest layout there
    # (the reply says a fix adds its own step time)
    compute = time_and_cost(resolved, lean_estimate.job) \
        if lean_estimate is not None and count is not None else None
    if compute is not None:
        notes += compute.assumptions
    return replace(base, gpus=count,
                compute=compute,
                layout=lean.layout if lean is not None else None,
                stack=stack,
                estimate=lean_estimate,
                shortfall_bytes=shortfall,
                why=tuple(why), fix=fix, other_fixes=tuple(others), assumptions=tuple(notes))


def logits_bytes(estimate: Estimate | None) -> int:
    """The loss's logits buffers at a layout: what a chunked loss frees."""
    if estimate is None:
        return 0
    return sum(c.bytes for c in estimate.components if c.source == LOSS_SOURCE)


def _chosen(resolved: ResolvedJob, layout: Layout, activation_model: str) -> list[Assumption]:
    """In the planner's fewest-GPUs answer, the knobs it chose replace the one-GPU defaults."""
    why = "the planner's choice: the fastest layout on the fewest GPUs"
    out = [derived("gpu_count", layout.gpus, "the fewest that fit: powers of two inside a "
                   "node, then whole nodes")]
    for field, value in (("zero_stage", layout.zero_stage), ("recompute", layout.recompute),
                         ("micro_batch", layout.micro_batch), ("tp", layout.tp),
                         ("pp", layout.pp), ("cp", layout.cp), ("ep", layout.ep)):
        if not resolved.pinned(field):
            out.append(derived(field, value, why, minor=field in ("tp", "pp", "cp", "ep")
                               and value == 1))
    if not resolved.pinned("activation_model"):
        out.append(derived("activation_model", activation_model, "the stack's modules: "
                           "Megatron-LM kernels with TP or PP, else Hugging Face modules",
                           minor=True))
    return out


def _assumptions(resolved: ResolvedJob, searcher: Searcher,
                 fewest_mode: bool) -> tuple[Assumption, ...]:
    """What the planner assumed on top of the resolved job's assumptions."""
    space, pinned = searcher.space, resolved.pinned
    notes = [said_or_default("memory_headroom", resolved.headroom, pinned("memory_headroom"),
                             f"plan to {resolved.headroom:.0%} of usable memory: "
                             f"{gb(searcher.budget)} per GPU, room for fragmentation and spikes")]
    if not space.global_batch:
        notes.append(default("global_batch", "one micro-batch per data-parallel rank",
                             "per-GPU memory does not depend on gradient accumulation (with "
                             "pipeline parallelism: 4 x pp micro-batches); give global_batch for "
                             "the launch configs' accumulation: pretraining steps usually take "
                             "0.5-16M tokens", "GPT-3, Brown et al. 2020, table 2.1 (0.5M-3.2M "
                             "tokens); Llama 3, Dubey et al. 2024, sec. 3.4.1 (4M-16M tokens)"))
    if not pinned("tp"):
        notes.append(default("plan.tensor_parallel", f"within {space.nvlink_domain} GPUs",
                             "tensor parallelism only inside one NVLink domain, with sequence "
                             "parallelism", minor=True))
    if not pinned("offload"):
        notes.append(default("offload", "none", "CPU offload only as a last resort (a fix "
                             "when GPUs fall short)", minor=True))
    notes.append(default("plan.ranking", "step-time model", "layouts ranked by relative step "
                         "time: recompute, pipeline bubble, TP/CP/EP and ZeRO-3 communication, "
                         "offload", "service/core/planning/step_time.py", minor=True))
    return tuple(notes)
