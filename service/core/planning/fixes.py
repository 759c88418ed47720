"""Given GPUs that fall short: the cheapest change that makes the job fit.

Tried in this order, and the first that works is the fix (the rest are listed):
1. free knobs the user pinned (recompute, ZeRO stage, TP, PP, CP, EP, micro-batch, sequence
   parallelism), ranked by the relative step time they lead to;
2. hardware, cheapest per hour first: more GPUs of this type (whole nodes), or the same count
   of the cheapest GPU with more memory on which it fits;
3. CPU offload (ZeRO-Offload, then ZeRO-Infinity) as the last resort: no new hardware, but
   optimizer steps on the CPU and PCIe traffic every step.
"""

from __future__ import annotations

from dataclasses import replace

from service.core.hardware.gpus import Gpu, all_gpus
from service.core.job.resolve import ResolvedJob
from service.core.memory.model_state import offloaded_bytes
from service.core.planning.layouts import SearchSpace, context_parallel_sizes, tensor_parallel_sizes
from service.core.planning.plan_types import Candidate, Fix
from service.core.planning.search import Searcher
from service.core.planning.search_setup import budget_bytes, build_space, make_searcher
from service.core.units import gb

ALL_RECOMPUTE = ("none", "selective", "full")
ALL_OFFLOAD = ("none", "optimizer", "optimizer_and_params")


def _freed(space: SearchSpace, resolved: ResolvedJob) -> list[tuple[str, SearchSpace]]:
    """One space per pinned knob, with that knob free again."""
    job, pinned = resolved.job, resolved.pinned
    out: list[tuple[str, SearchSpace]] = []
    if pinned("recompute") and job.recompute != "full":
        out.append(("recompute", replace(space, recomputes=ALL_RECOMPUTE)))
    if pinned("zero_stage") and job.parallel.zero_stage < 3:
        out.append(("zero_stage", replace(space, zero_stages=(0, 1, 2, 3), zero_stated=False)))
    if pinned("tp"):
        tps = tensor_parallel_sizes(space.arch, space.nvlink_domain)
        out.append(("tp", replace(space, tps=tps)))
    if pinned("pp"):
        out.append(("pp", replace(space, pps=None)))
    if pinned("cp"):
        out.append(("cp", replace(space, cps=context_parallel_sizes(space.seq_len))))
    if pinned("ep"):
        out.append(("ep", replace(space, eps=None)))
    if pinned("micro_batch") and job.micro_batch > 1:
        out.append(("micro_batch", replace(space, micro_batches=None)))
    if pinned("sequence_parallel") and not job.parallel.sequence_parallel:
        out.append(("sequence_parallel", replace(space, sequence_parallel=None)))
    return out


def _stated_value(knob: str, resolved: ResolvedJob) -> object:
    job = resolved.job
    if knob in ("recompute", "micro_batch"):
        return getattr(job, knob)
    return getattr(job.parallel, knob)


def _change(knob: str, resolved: ResolvedJob, c: Candidate) -> str:
    lay = c.layout
    now = {"recompute": lay.recompute, "zero_stage": lay.zero_stage, "tp": lay.tp, "pp": lay.pp,
           "cp": lay.cp, "ep": lay.ep, "micro_batch": lay.micro_batch,
           "sequence_parallel": lay.sequence_parallel}[knob]
    return f"{knob}={now} instead of {_stated_value(knob, resolved)} ({lay.describe()})"


def fixes_for(resolved: ResolvedJob, gpu: Gpu, count: int,
              min_gpus: int | None) -> tuple[Fix | None, list[Fix]]:
    base = make_searcher(resolved, gpu)
    knob_fixes: list[tuple[float, Fix]] = []
    for knob, space in _freed(base.space, resolved):
        found = Searcher(space, base.memory, base.budget, base.virtual_stages).at(count).best
        if found is not None:
            knob_fixes.append((found.step_time, Fix(
                _change(knob, resolved, found), count, gpu.id, found.total_bytes,
                f"relative step time {found.step_time:.2f} ({found.slowdowns()})")))
    fixes = [f for _, f in sorted(knob_fixes, key=lambda t: t[0])]
    hardware: list[tuple[float, Fix]] = []
    if min_gpus is not None:
        price = (gpu.price_per_gpu_hour_usd or 0.0) * min_gpus
        hardware.append((price, Fix(
            f"{min_gpus} GPUs instead of {count} ({min_gpus - count:+d})",
            min_gpus, gpu.id, None, _per_hour(gpu, min_gpus))))
    bigger = sorted((g for g in all_gpus() if g.memory_bytes_usable > gpu.memory_bytes_usable),
                    key=lambda g: (g.price_per_gpu_hour_usd is None,
                                   g.price_per_gpu_hour_usd or 0.0, g.memory_bytes_usable))
    vendors: set[str] = set()  # the cheapest bigger GPU that fits, and the same vendor's
    for other in bigger:
        if other.vendor in vendors or (vendors and other.vendor != gpu.vendor):
            continue
        space = build_space(resolved, other)
        found = Searcher(space, base.memory, budget_bytes(resolved, other),
                         base.virtual_stages).at(count).best
        if found is not None:
            price = (other.price_per_gpu_hour_usd or float("inf")) * count
            hardware.append((price, Fix(f"{count}x {other.name} instead ({found.layout.describe()})",
                                        count, other.id, found.total_bytes,
                                        _per_hour(other, count))))
            vendors.add(other.vendor)
            if gpu.vendor in vendors:
                break
    fixes += [f for _, f in sorted(hardware, key=lambda t: t[0])]
    if not resolved.pinned("offload"):
        space = replace(base.space, offloads=ALL_OFFLOAD)
        found = Searcher(space, base.memory, base.budget, base.virtual_stages).at(count).best
        if found is not None:
            host = offloaded_bytes(base.memory.job(found.layout))
            fixes.append(Fix(f"CPU offload ({found.layout.describe()})", count, gpu.id,
                             found.total_bytes,
                             f"slow: optimizer steps on the CPU over PCIe (relative step time "
                             f"{found.step_time:.2f}); {gb(host)} of CPU memory per GPU"))
    return (fixes[0] if fixes else None), fixes[1:]


def _per_hour(gpu: Gpu, count: int) -> str:
    if gpu.price_per_gpu_hour_usd is None:
        return "no catalog price"
    return f"~${gpu.price_per_gpu_hour_usd * count:,.2f} per hour at catalog prices"
