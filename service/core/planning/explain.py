"""Why the planner chose a layout, what it rejected, and the one-line verdict."""

from __future__ import annotations

from dataclasses import replace

from service.core.memory.breakdown import Estimate
from service.core.planning.plan_types import Alternative, Candidate
from service.core.planning.search import CountResult, Searcher
from service.core.planning.step_time import pipeline_bubble
from service.core.units import gb

LESS_RECOMPUTE = {"full": ("selective", "none"), "selective": ("none",), "none": ()}


def _states_line(est: Estimate, c: Candidate) -> str:
    lay = c.layout
    states = sum(est.component_bytes(k) for k in ("weights", "gradients", "optimizer"))
    split = []
    if lay.tp * lay.pp > 1:
        split.append(f"split {lay.tp * lay.pp} ways by TP x PP")
    ranks = lay.dp * lay.cp
    if ranks > 1 and lay.zero_stage:
        what = {1: "optimizer state", 2: "optimizer state and gradients",
                3: "weights, gradients and optimizer state"}[lay.zero_stage]
        over = f"{lay.dp} data-parallel" + (f" x {lay.cp} context-parallel" if lay.cp > 1 else "")
        split.append(f"ZeRO-{lay.zero_stage} shards {what} over {over} ranks")
    how = "; ".join(split) if split else "not sharded"
    return f"model states {gb(states)} per GPU ({how})"


def _recompute_line(searcher: Searcher, c: Candidate) -> str | None:
    lay = c.layout
    if lay.recompute == "none" or len(searcher.space.recomputes) == 1:
        return None
    for lighter in LESS_RECOMPUTE[lay.recompute]:
        total = searcher.memory.total(replace(lay, recompute=lighter))
        if total > searcher.budget:
            return (f"{lay.recompute} recompute is needed: with {lighter} recompute this layout "
                    f"needs {gb(total)} per GPU, over the {gb(searcher.budget)} budget")
    return f"{lay.recompute} recompute: faster layouts without it need more GPUs or TP"


def why_lines(searcher: Searcher, best: Candidate, here: CountResult,
              miss: CountResult | None, estimate: Estimate, fewest_mode: bool) -> list[str]:
    lay, space = best.layout, searcher.space
    arch = space.arch
    lines = [f"{gb(best.total_bytes)} per GPU of a {gb(searcher.budget)} budget; "
             + _states_line(estimate, best)]
    rec = _recompute_line(searcher, best)
    if rec:
        lines.append(rec)
    if lay.tp > 1:
        lines.append(f"TP={lay.tp} inside one NVLink domain: heads {arch.heads}/{lay.tp}, KV "
                     f"heads {arch.kv_heads_resolved}/{lay.tp}"
                     + (", with sequence parallelism" if lay.sequence_parallel else ""))
    if lay.pp > 1:
        bubble = pipeline_bubble(lay.pp, lay.grad_accum, searcher.virtual_stages)
        lines.append(f"PP={lay.pp}: {-(-arch.layers // lay.pp)} layers per stage, "
                     f"{lay.grad_accum} micro-batches per step, bubble (pp-1)/m = {bubble:.1%}")
    if lay.cp > 1:
        lines.append(f"CP={lay.cp}: each sequence split into {lay.cp} chunks of "
                     f"{space.seq_len // lay.cp:,} tokens (one sequence's activations did not "
                     "fit its ranks otherwise)")
    if lay.ep > 1:
        lines.append(f"EP={lay.ep}: each GPU holds {arch.moe.experts // lay.ep if arch.moe else 0}"
                     " of the routed experts")
    replicas = f"{lay.dp} data-parallel replica{'s' if lay.dp > 1 else ''} x micro-batch " \
        f"{lay.micro_batch}"
    if space.global_batch:
        lines.append(f"{replicas} x {lay.grad_accum} accumulation = the global batch of "
                     f"{lay.global_batch} sequences (data parallelism splits whole sequences)")
    else:
        lines.append(f"{replicas}" + (f" x {lay.grad_accum} pipeline micro-batches"
                                      if lay.grad_accum > 1 else "")
                     + ": no global batch stated; give global_batch to plan accumulation")
    if miss is not None and miss.leanest is not None:
        lean = miss.leanest
        lines.append(f"fewer GPUs do not fit: on {miss.gpus} the leanest valid layout "
                     f"({lean.layout.describe()}; {lean.layout.shape()}) needs "
                     f"{gb(lean.total_bytes)} per GPU")
    elif miss is not None:
        lines.append(f"fewer GPUs do not fit: {miss.gpus} GPUs have no valid layout")
    elif fewest_mode and lay.gpus > 1:
        lines.append(f"fewer GPUs cannot hold the model states: below {lay.gpus} GPUs they "
                     "exceed the budget even spread perfectly")
    others = len(here.fitting) - 1
    why = f"fastest of {others + 1} layouts that fit on {lay.gpus} GPUs" if others else \
        f"the only layout that fits on {lay.gpus} GPUs"
    lines.append(f"{why}: relative step time {best.step_time:.2f} ({best.slowdowns()})")
    return lines


def alternatives(searcher: Searcher, best: Candidate, here: CountResult,
                 miss: CountResult | None, limit: int = 3) -> list[Alternative]:
    out: list[Alternative] = []
    for c in here.fitting:
        if c.layout == best.layout or len(out) >= limit:
            continue
        out.append(Alternative(
            f"{c.layout.describe()} ({c.layout.shape()})", c.layout.gpus, c.total_bytes,
            round(c.step_time, 3),
            f"slower: relative step time {c.step_time:.2f} vs {best.step_time:.2f} "
            f"({c.slowdowns()})"))
    if miss is not None and miss.leanest is not None:
        lean = miss.leanest
        out.append(Alternative(
            f"{lean.layout.describe()} ({lean.layout.shape()})", lean.layout.gpus,
            lean.total_bytes, round(lean.step_time, 3),
            f"does not fit: {gb(lean.total_bytes)} per GPU > {gb(searcher.budget)} budget"))
    return out
