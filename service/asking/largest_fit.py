"""Answers to questions for a limit rather than a verdict ("max context i can serve at",
"biggest micro batch on one a100").

Serving: the longest context comes from the KV budget (budget per GPU / KV bytes per token per
GPU, shared by the stated sequences). Training and fine-tuning: the largest power of two (seq
len or micro-batch) that the planner still fits on the stated GPUs, found by doubling.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from service.core.report.answer_types import Answer
from service.core.units import gb

AnswerFor = Callable[[dict[str, Any]], Awaitable[Answer]]

LIMITS = {"seq_len": (512, 1 << 20), "micro_batch": (1, 1024)}


async def limit_line(answer_for: AnswerFor, field: str, merged: dict[str, Any],
                     answer: Answer) -> str | None:
    """``answer_for``: answers changed fields (raises when the engine refuses them)."""
    if answer.task == "infer":
        return serving_context(merged, answer) if field == "seq_len" else None
    if "gpu" not in merged or ("gpu_count" not in merged and "nodes" not in merged):
        return ("For the largest value that fits, name the GPUs, e.g. `on 1x A100 80GB` "
                "(otherwise the answer is always \"add GPUs\").")
    low, high = LIMITS[field]
    # a layout the user stated (its figures are the answer's own, with none ``as_stated``
    # beside them) is kept: "FSDP + checkpointing on 32 H100s, what mbs can I push" asks about
    # that layout, not one the planner would re-shape with tensor parallelism
    kept = answer.as_stated is None and answer.planner is not None
    best: int | None = None
    value = low
    while value <= high:
        try:
            trial = await answer_for({**merged, field: value})
        except Exception:
            break
        fits = _stated_fits(trial) if kept else trial.planner is not None and trial.planner.fits
        if not fits:
            break
        best, value = value, value * 2
    what = "sequence length" if field == "seq_len" else "micro-batch per GPU"
    where = " with the layout as stated" if kept else ""
    if best is None:
        return f"Largest {what} that fits{where}: none (not even {low:,})."
    more = " (the most I try)" if best * 2 > high else f"; {best * 2:,} does not"
    return f"Largest {what} that fits{where} (powers of two): *{best:,}*{more}."


def _stated_fits(answer: Answer) -> bool:
    """Whether the request's own layout fits (under ``as_stated`` when the planner's layout
    leads the answer)."""
    return bool(answer.as_stated.fits if answer.as_stated is not None else answer.fits)


def serving_context(merged: dict[str, Any], answer: Answer) -> str | None:
    per_seq = answer.details.get("kv_bytes_per_sequence")
    budget = answer.details.get("kv_budget_bytes")
    context = answer.plan.context
    if not isinstance(per_seq, int | float) or not isinstance(budget, int | float) \
            or per_seq <= 0 or not context:
        return None
    sequences = int(merged.get("concurrent") or merged.get("batch") or 1)
    per_token = per_seq / context
    tokens = int(budget / per_token / sequences)
    who = "one sequence" if sequences == 1 else f"each of {sequences:,} sequences"
    return (f"Longest context that fits: *≈{tokens:,} tokens* for {who} "
            f"(KV budget {gb(int(budget))} per GPU at {per_token / 1e3:,.1f} KB per token per GPU); "
            "the model's own context limit still applies.")
