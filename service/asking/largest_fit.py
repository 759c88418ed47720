"""Answers to questions for a limit rather than a verdict ("max context i can serve at",
"biggest micro batch on one a100").

Serving: the longest context comes from the KV budget (budget per GPU / KV bytes per token per
GPU, shared by the stated sequences), capped by the model's trained context, in whole
1,024-token steps; the answer is then given at that context (its headline, its breakdown, the
thread's next question). Training and fine-tuning: the largest power of two (seq
len or micro-batch) that the planner still fits on the stated GPUs, found by doubling.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any

from service.asking.ask_types import Refused
from service.asking.largest_model import fits_as_answered
from service.core.model.presets import lookup_preset
from service.core.planning.serving_fixes import CONTEXT_STEP
from service.core.report.answer_types import Answer
from service.core.units import gb

AnswerFor = Callable[[dict[str, Any]], Awaitable[Answer]]

LIMITS = {"seq_len": (512, 1 << 20), "micro_batch": (1, 1024)}


async def limit_line(answer_for: AnswerFor, field: str, merged: dict[str, Any],
                     answer: Answer) -> str | None:
    """``answer_for``: answers changed fields (raises when the engine refuses them)."""
    if answer.task == "infer":
        return None  # serving's limit is ``serving_context``
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


@dataclass(frozen=True, slots=True)
class ServingContext:
    line: str
    answer: Answer | None  # the job at the longest context (leads the reply), else None
    fields: dict[str, Any] | None  # the question at that context (the thread goes on with it)


async def serving_context(answer_for: AnswerFor, merged: dict[str, Any],
                          answer: Answer) -> ServingContext | None:
    """The longest context that holds the stated sequences, in whole ``CONTEXT_STEP``s up to the
    model's trained context, answered at that context. Found by bisection on real answers: the
    KV per token is not one figure (a sliding-window layer holds its window and a prefill chunk
    whatever the context, and the profile's activations grow with it), so the 4k answer's
    budget only seeds the search."""
    sequences = int(merged.get("concurrent") or merged.get("batch") or 1)
    room = _kv_tokens(answer, sequences)
    if room is None:
        return None
    who = "one sequence" if sequences == 1 else f"each of {sequences:,} sequences"
    preset = lookup_preset(answer.model)
    trained = preset.max_context if preset is not None else None
    # unknown trained context: up to twice the linear estimate (windows can only add room)
    top = trained or max(CONTEXT_STEP, 2 * room // CONTEXT_STEP * CONTEXT_STEP)
    tried: dict[int, Answer | None] = {}

    async def serves(context: int) -> Answer | None:
        if context not in tried:
            try:
                trial: Answer | None = await answer_for({**merged, "seq_len": context})
            except Refused:
                trial = None
            tried[context] = trial if trial is not None and fits_as_answered(trial) else None
        return tried[context]

    context = top if await serves(top) else 0
    if not context:  # bisection over whole steps below the top: low serves, high does not
        low, high = 0, (top - 1) // CONTEXT_STEP + 1
        guess = min(high - 1, room // CONTEXT_STEP)
        if guess >= 1 and await serves(guess * CONTEXT_STEP):
            low = guess
        elif guess >= 1:
            high = guess
        while high - low > 1:
            mid = (low + high) // 2
            if await serves(mid * CONTEXT_STEP):
                low = mid
            else:
                high = mid
        context = low * CONTEXT_STEP
    found = tried.get(context) if context else None
    if found is None:
        why = _basis(answer) if answer.details["kv_budget_bytes"] > 0 else \
            "the weights and the overhead leave no KV budget on these GPUs"
        return ServingContext(f"Longest context that fits: none of at least {CONTEXT_STEP:,} "
                              f"tokens for {who} ({why}).", None, None)
    if trained and context >= trained:
        line = (f"Longest context: the model's whole trained context, *{trained:,} tokens*, fits "
                f"for {who} (its config's max_position_embeddings).")
    else:
        line = (f"Longest context that fits: *{context:,} tokens* for {who}, in whole "
                f"{CONTEXT_STEP:,}-token steps; {context + CONTEXT_STEP:,} does not.")
    found = _mark_found(found, context)
    return ServingContext(line, found, {**merged, "seq_len": context})


def _basis(answer: Answer) -> str:
    budget = answer.details["kv_budget_bytes"]
    return (f"KV budget of {gb(int(budget))} per GPU at {_per_token(answer) / 1e3:,.1f} KB per "
            "token per GPU")


def _per_token(answer: Answer) -> float:
    return float(answer.details["kv_bytes_per_sequence"]) / (answer.plan.context or 1)


def _kv_tokens(answer: Answer, sequences: int) -> int | None:
    """Tokens of context per sequence that the answer's KV budget holds."""
    per_seq = answer.details.get("kv_bytes_per_sequence")
    budget = answer.details.get("kv_budget_bytes")
    if not isinstance(per_seq, int | float) or not isinstance(budget, int | float) \
            or per_seq <= 0 or not answer.plan.context:
        return None
    return int(budget / _per_token(answer) / sequences)


def _mark_found(answer: Answer, context: int) -> Answer:
    """The context is fitcheck's answer, not the user's setting: its record says so."""
    why = "the longest context that fits, the question's answer"
    return replace(answer, assumptions=[
        replace(a, origin="derived", why=why) if a.field == "seq_len" and a.value == context
        else a for a in answer.assumptions])
