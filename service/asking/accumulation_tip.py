"""A stated micro-batch that does not fit on the stated layout: the first thing an engineer
tries is a smaller micro-batch with gradient accumulation, which keeps the layout and the
sequences per optimizer step (held-out set 28: "OOM at step 0 ... mbs 2, what gives" was
answered with TP=2, which also halved the global batch, and never with micro-batch 1 x 2)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from service.asking.ask_types import Refused
from service.core.report.answer_types import Answer
from service.core.units import gb

AnswerFor = Callable[[dict[str, Any]], Awaitable[Answer]]


async def accumulation_tip(answer_for: AnswerFor, merged: dict[str, Any],
                           answer: Answer) -> str | None:
    """The largest smaller micro-batch (halving, down to 1) with the accumulation that keeps
    the step's sequences, on the layout as written, when that one fits there."""
    own = answer.as_stated
    micro = merged.get("micro_batch")
    if answer.task == "infer" or own is None or own.fits is not False \
            or not isinstance(micro, int) or micro < 2:
        return None
    plan = own.plan
    per_step = micro * plan.dp * plan.grad_accum
    smaller = micro // 2
    while smaller >= 1:
        if per_step % (smaller * plan.dp) == 0:
            try:
                trial = await answer_for({**merged, "micro_batch": smaller,
                                          "global_batch": per_step})
            except Refused:
                return None
            stated = trial.as_stated
            fits = stated.fits if stated is not None else trial.fits
            if fits:
                total = (stated.per_gpu_bytes if stated is not None else trial.per_gpu_bytes).total
                accum = per_step // (smaller * plan.dp)
                return (f"Or keep the layout as written with micro-batch {smaller} x {accum} "
                        f"accumulation steps (the same {per_step:,} sequences a step): "
                        f"{gb(total)} per GPU, which fits.")
        smaller //= 2
    return None
