"""Answers to questions for a limit rather than a verdict ("max context i can serve at",
"biggest micro batch on one a100").

Serving: the longest context comes from the KV budget (budget per GPU / KV bytes per token per
GPU, shared by the stated sequences). Training and fine-tuning: the largest power of two (seq
len or micro-batch) that the planner still fits on the stated GPUs, found by doubling.
"""

from __future__ import annotations

from typing import Any

from service.asking.run_engine import run
from service.core.memory.breakdown import Estimate
from service.core.planning.plan_types import Plan
from service.core.units import gb

_LIMITS = {"seq_len": (512, 1 << 20), "micro_batch": (1, 1024)}


def answer(field: str, merged: dict[str, Any], est: Estimate, plan: Plan | None) -> str | None:
    """One reply line with the limit, or None when it cannot be worked out."""
    if est.task == "infer":
        return _serving_context(merged, est, plan) if field == "seq_len" else None
    if "gpu" not in merged or ("gpu_count" not in merged and "nodes" not in merged):
        return ("For the largest value that fits, name the GPUs, e.g. `on 1x A100 80GB` "
                "(otherwise the answer is always \"add GPUs\").")
    low, high = _LIMITS[field]
    best: int | None = None
    value = low
    while value <= high:
        out = run({**merged, field: value})
        if out.plan is None or not out.plan.fits:
            break
        best, value = value, value * 2
    what = "sequence length" if field == "seq_len" else "micro-batch per GPU"
    if best is None:
        return f"Largest {what} that fits: none (not even {low:,})."
    more = " (the most I try)" if best * 2 > high else f"; {best * 2:,} does not"
    return f"Largest {what} that fits (powers of two): *{best:,}*{more}."


def _serving_context(merged: dict[str, Any], est: Estimate, plan: Plan | None) -> str | None:
    details: dict[str, Any] = plan.serving if plan is not None and plan.serving else dict(est.extra)
    per_seq = details.get("kv_per_sequence_bytes", details.get("kv_bytes_per_sequence"))
    budget = details.get("kv_budget_bytes")
    context = details.get("context") or merged.get("seq_len")
    if not isinstance(per_seq, int | float) or not isinstance(budget, int | float) or per_seq <= 0 \
            or not isinstance(context, int) or context <= 0:
        return None
    sequences = int(merged.get("concurrent") or merged.get("batch") or 1)
    per_token = per_seq / context
    tokens = int(budget / per_token / sequences)
    who = "one sequence" if sequences == 1 else f"each of {sequences:,} sequences"
    return (f"Longest context that fits: *≈{tokens:,} tokens* for {who} "
            f"(KV budget {gb(int(budget))} per GPU at {per_token / 1e3:,.1f} KB per token per GPU); "
            "the model's own context limit still applies.")
