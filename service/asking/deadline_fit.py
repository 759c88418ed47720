"""Answers to "how many GPUs to finish by a deadline" ("train 8b on 1T tokens in 7 days"): the
time estimate's GPU-hours over the hours allowed give a first count, rounded up to whole nodes;
the planner then checks it on that count (memory, and its step time, which grows with the
data-parallel traffic), one node more at a time until it finishes in time. With a count given
("is 4x H100 enough ...?"), the answer is yes or no on that count first."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from service.core.hardware.gpus import find_gpu
from service.core.report.answer_types import Answer
from service.render.assumption_text import human_tokens

AnswerFor = Callable[[dict[str, Any]], Awaitable[Answer]]
DEFAULT_GPU = "h100-80gb"  # as for "how many GPUs" without a GPU type
MORE_NODES = 8  # nodes added one by one past the first count before giving up


@dataclass(frozen=True, slots=True)
class DeadlineFit:
    answer: Answer | None  # the answer on the count that finishes in time (None: none found)
    line: str  # what to say first


def first_count(gpu_hours: float, hours: float, per_node: int) -> int:
    """GPU-hours / hours allowed, up to a power of two inside a node or whole nodes."""
    needed = max(1, math.ceil(gpu_hours / hours))
    if needed <= per_node:
        return min(per_node, 1 << (needed - 1).bit_length())
    return math.ceil(needed / per_node) * per_node


async def deadline_fit(answer_for: AnswerFor, merged: dict[str, Any], answer: Answer,
                       hours: float) -> DeadlineFit:
    """``answer_for``: answers changed fields; ``answer``: the answer as asked."""
    days = hours / 24
    span = f"{days:g} day{'' if days == 1 else 's'}" if days >= 1 else \
        f"{hours:g} hour{'' if hours == 1 else 's'}"
    if answer.task == "infer":
        return DeadlineFit(None, "")
    if answer.compute is None:
        return DeadlineFit(None, f"To size GPUs for {span} I need the training tokens, "
                           "e.g. `on 1T tokens`.")
    fields = {k: v for k, v in merged.items() if k not in ("gpu_count", "nodes")}
    fields.setdefault("gpu", DEFAULT_GPU)
    per_node = find_gpu(str(fields["gpu"])).gpus_per_node
    count = first_count(answer.compute.gpu_hours, hours, per_node)
    tried: dict[int, Answer] = {}
    best: tuple[int, Answer] | None = None  # the fewest GPUs found that finish in time
    for _ in range(MORE_NODES + 4):
        trial = tried.get(count) or await answer_for({**fields, "gpu_count": count})
        tried[count] = trial
        fits = trial.planner is None or trial.planner.fits
        if fits and trial.compute is not None and trial.compute.days <= days:
            if best is None or count < best[0]:
                best = (count, trial)
            fewer = first_count(trial.compute.gpu_hours, hours, per_node)  # at this step time
            if fewer < count and fewer not in tried:
                count = fewer
                continue
            break
        if best is not None:
            break  # fewer GPUs than a count that finishes in time do not
        count += per_node if count >= per_node else count
    if best is None:
        took = trial.compute.days if trial.compute else float("nan")
        return DeadlineFit(None, f"No count up to {count:,} GPUs finishes in {span} "
                           f"({took:,.1f} days there): more GPUs add data-parallel traffic "
                           "faster than they add speed.")
    count, found = best
    assert found.compute is not None
    gpu = found.gpu_name or fields["gpu"]
    fewest = (f"*{count:,}x {gpu}* ({found.compute.days:,.1f} days, "
              f"{found.compute.gpu_hours:,.0f} GPU-hours)")
    stated = merged.get("gpu_count")
    if isinstance(stated, int) and answer.compute is not None:  # "is 4x H100 enough ...?"
        on_stated = f"{stated:,}x {answer.gpu_name or gpu} take {answer.compute.days:,.1f} days"
        in_time = (answer.planner is None or answer.planner.fits) and answer.compute.days <= days
        if in_time:
            also = f"; {fewest} would do too" if count < stated else ""
            return DeadlineFit(answer, f"Yes: {on_stated}{also}.")
        fits_there = answer.planner is None or answer.planner.fits
        tokens = merged.get("tokens")
        partial = ""
        if fits_there and isinstance(tokens, int | float) and answer.compute.days > 0:
            done = human_tokens(tokens * days / answer.compute.days).removesuffix(" tokens")
            partial = f"; in {span} they get through ≈{done} of the {human_tokens(tokens)}"
        return DeadlineFit(found, f"No: {on_stated}" + ("" if fits_there else " (and do not fit)")
                           + f"{partial}. To finish in {span}: {fewest}.")
    return DeadlineFit(found, f"To finish in {span}: {fewest}.")
