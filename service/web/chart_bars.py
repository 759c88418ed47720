"""Which bars the memory chart draws, and its scale.

One bar per distinct layout (the plan the headline speaks of first; the request as stated, or
the planner's layout, only when it differs), and a scale set by the plan and the GPU's memory,
so a far larger "as stated" bar is cut at the scale's end (and says so) instead of squeezing the
real plan into a sliver.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from service.core.report.answer_types import Answer, LayoutEntry, PerGpuBytes
from service.core.report.headline import own_figures, own_layout_label, speaks_of_planner

# The scale reaches this far past the larger of the plan and the usable memory.
SCALE_ROOM = 1.12


@dataclass(frozen=True, slots=True)
class Bar:
    name: str  # 'Plan: 8 GPUs'
    plan: LayoutEntry
    per_gpu: dict[str, int]  # component -> bytes, and 'total'

    @property
    def layout(self) -> str:
        """'ZeRO-3, full recompute, micro-batch 1'."""
        return layout_brief(self.plan)

    @property
    def total(self) -> int:
        return self.per_gpu.get("total", 0)


def bytes_map(per_gpu: PerGpuBytes) -> dict[str, int]:
    return {f.name: getattr(per_gpu, f.name) for f in fields(per_gpu)}


def layout_brief(plan: LayoutEntry) -> str:
    """'ZeRO-3, TP=4, full recompute, micro-batch 1' (only what is not the plain default)."""
    parts = []
    if plan.zero_stage:
        parts.append(f"ZeRO-{plan.zero_stage}")
    parts += [f"{name}={value}" for name, value in
              (("TP", plan.tp), ("PP", plan.pp), ("CP", plan.cp), ("EP", plan.ep)) if value > 1]
    if plan.recompute != "none":
        parts.append(f"{plan.recompute} recompute")
    if plan.offload != "none":
        parts.append("offload " + plan.offload.replace("_and_", " and ").replace("params",
                                                                                 "weights"))
    if plan.sequences is None:
        parts.append(f"micro-batch {plan.micro_batch}")
    else:
        parts.append(f"{plan.sequences:,} x {plan.context or 0:,} tokens")
    # serving replicas, each with its share of the sequences
    replicas = f"{plan.dp} replicas of " if plan.sequences is not None and plan.dp > 1 \
        and plan.ep == 1 else ""  # with EP the ranks share one engine: "EP=8" says it
    return replicas + ", ".join(parts)


# What a layout is; the rest (global_batch, max_concurrent_sequences) is derived from it, and
# the planner fills in what the request as stated leaves open.
DEFINING = ("gpus", "nodes", "dp", "tp", "pp", "cp", "ep", "zero_stage", "sequence_parallel",
            "recompute", "micro_batch", "grad_accum", "offload", "context", "sequences")


def same_layout(a: LayoutEntry, b: LayoutEntry, a_bytes: PerGpuBytes, b_bytes: PerGpuBytes
                ) -> bool:
    """The same split of the same job, with the same memory: one bar, not two."""
    return a_bytes == b_bytes and all(getattr(a, n) == getattr(b, n) for n in DEFINING)


def _gpus(n: int) -> str:
    return f"{n:,} GPU" + ("s" if n != 1 else "")


def chart_bars(answer: Answer) -> list[Bar]:
    """The plan the verdict speaks of first, then each other distinct layout."""
    top = bytes_map(answer.per_gpu_bytes)
    gpus = _gpus(answer.plan.gpus)
    planner = answer.planner
    if planner is not None and planner.layout is not None and planner.mode == "given":
        other, own = planner.layout, own_figures(answer)
        if same_layout(other.plan, own.plan, other.per_gpu_bytes, own.per_gpu_bytes):
            return [Bar(f"Plan on {gpus}", other.plan, top)]
        theirs = Bar(f"Planner's layout on {_gpus(other.plan.gpus)}", other.plan,
                     bytes_map(other.per_gpu_bytes))
        mine = Bar(f"{own_layout_label(answer)} on {gpus}", own.plan, bytes_map(own.per_gpu_bytes))
        return [theirs, mine] if speaks_of_planner(answer) else [mine, theirs]
    if answer.as_stated is not None:
        stated = answer.as_stated
        plan = Bar(f"Plan: {gpus}", answer.plan, top)
        if same_layout(stated.plan, answer.plan, stated.per_gpu_bytes, answer.per_gpu_bytes):
            return [plan]
        return [plan, Bar(f"{own_layout_label(answer)}: {_gpus(stated.plan.gpus)}", stated.plan,
                          bytes_map(stated.per_gpu_bytes))]
    return [Bar(f"{own_layout_label(answer)}: {gpus}", answer.plan, top)]


def scale_top(bars: list[Bar], capacity: int | None) -> float:
    """The chart's right end in bytes: the first bar (the plan) and the usable memory fit with
    room; a bar past it is drawn cut."""
    reference = max(bars[0].total if bars else 0, capacity or 0)
    if capacity is None:
        reference = max([b.total for b in bars] + [1])
    return max(reference, 1) * SCALE_ROOM
