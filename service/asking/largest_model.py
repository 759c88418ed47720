""""What's the biggest model I can LoRA on a 3090?": the largest of the usual dense models that
the job fits on the stated GPUs (one when none is said), tried in size order.

The ladder is the dense sizes people pick from (each a built-in preset): Llama 3.2 1B and 3B,
Llama 3.1 8B, Qwen2.5 14B and 32B, Llama 3.3 70B, Llama 3.1 405B. Mixture-of-experts models
are left out: their memory follows their total parameters, their speed their active ones, and
a ladder of sizes would mix the two.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from service.asking.ask_types import Refused
from service.core.model.presets import lookup_preset
from service.core.report.answer_types import Answer

LADDER = ("llama-3.2-1b", "llama-3.2-3b", "llama-3.1-8b", "qwen2.5-14b", "qwen2.5-32b",
          "llama-3.3-70b", "llama-3.1-405b")
AnswerFor = Callable[[dict[str, Any]], Awaitable[Answer]]


@dataclass(frozen=True, slots=True)
class LargestModel:
    fields: dict[str, Any]  # the question with the largest model that fits (else the smallest)
    line: str


def fits_as_answered(answer: Answer) -> bool:
    """Whether the answer's own verdict holds the job: the planner's, else the estimate's."""
    planner = answer.planner
    return planner.fits if planner is not None else answer.fits is not False


async def largest_model(answer_for: AnswerFor, merged: dict[str, Any]) -> LargestModel:
    base = {k: v for k, v in merged.items() if k not in ("model", "params_b", "arch")}
    one = "gpu_count" not in base and "nodes" not in base
    if one:  # "on a 3090": one card; the fewest-GPUs search would always "fit"
        base["gpu_count"] = 1
    best: str | None = None
    over: str | None = None
    for model in LADDER:
        try:
            fits = fits_as_answered(await answer_for({**base, "model": model}))
        except Refused:
            fits = False
        if not fits:
            over = model
            break
        best = model
    where = "one GPU" if one else "the GPUs given"
    if best is None:
        return LargestModel({**base, "model": LADDER[0]},
                            f"Largest of the usual sizes that fits on {where}: none, not even "
                            f"{LADDER[0]} (the smallest I try).")
    nxt = f"; {over} does not" if over else " (the largest I try)"
    between = await _size_between(answer_for, base, best, over) if over else None
    size = (f" With {over}'s shape and fewer layers, about *{between:g}B* is the largest that fits "
            "there." if between is not None else "")
    return LargestModel({**base, "model": best},
                        f"Largest of the usual sizes that fits on {where}: *{best}*{nxt} (dense "
                        f"models tried in size order: {', '.join(LADDER)}).{size}")


async def _size_between(answer_for: AnswerFor, base: dict[str, Any], fits: str,
                        over: str) -> float | None:
    """The largest model of the next rung's shape with fewer of its layers that fits, in
    billions of parameters (its vocabulary, width and heads kept: the ladder jumps 14B -> 32B,
    and 52 of Qwen2.5 32B's 64 layers fit where all 64 are over), by bisection on the layers
    above the fitting rung's size."""
    preset, below = lookup_preset(over), lookup_preset(fits)
    if preset is None or below is None or preset.arch.moe is not None:
        return None
    arch = preset.arch.to_dict()
    per_layer = preset.published_params / preset.arch.layers  # near enough to bound the search
    lo = max(1, int(below.published_params / per_layer))  # about the fitting rung's size
    hi = preset.arch.layers  # over
    found: Answer | None = None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        try:
            answer = await answer_for({**base, "arch": {**arch, "layers": mid}})
        except Refused:
            hi = mid
            continue
        if fits_as_answered(answer):
            lo, found = mid, answer
        else:
            hi = mid
    return round(found.params_total / 1e9, 1) if found is not None else None
