"""What speculative decoding's draft model adds to a served target (vLLM ``--speculative-config
'{"model": DRAFT, "num_speculative_tokens": N}'``): its weights and its own KV cache on the
target's GPUs, at the target's tensor parallelism (vLLM's ``draft_tensor_parallel_size``
defaults to the target's), both out of the KV cache's room."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from service.asking.ask_types import Refused
from service.core.report.answer_types import Answer
from service.core.units import gb

AnswerFor = Callable[[dict[str, Any]], Awaitable[Answer]]


async def draft_line(answer_for: AnswerFor, draft: str, merged: dict[str, Any],
                     answer: Answer) -> str | None:
    if answer.task != "infer" or answer.gpu is None:
        return None
    planner = answer.planner
    figures = planner.layout if planner is not None and planner.layout is not None else None
    layout = figures.plan if figures is not None else answer.plan
    if not layout.context or not layout.sequences:
        return None
    kv_bytes = figures.per_gpu_bytes.kv_cache if figures is not None else answer.per_gpu_bytes.kv_cache
    target_token = kv_bytes / -(-layout.sequences // max(1, layout.dp)) / layout.context
    fields = {"model": draft, "task": "infer", "seq_len": layout.context, "gpu": answer.gpu,
              "gpu_count": layout.tp, "tp": layout.tp,
              **{k: merged[k] for k in ("kv_cache_dtype",) if k in merged}}
    try:
        found = await answer_for(fields)
    except Refused:
        return None
    per_seq = found.details.get("kv_bytes_per_sequence")
    if not isinstance(per_seq, int | float) or target_token <= 0:
        return None
    draft_token = per_seq / layout.context
    weights = found.per_gpu_bytes.weights
    share = draft_token / target_token
    line = (f"Draft model {draft} (speculative decoding), not in the figures above: at the "
            f"target's TP={layout.tp} (vLLM's default draft_tensor_parallel_size) it adds "
            f"{gb(weights)} of weights per GPU and {draft_token / 1e3:,.1f} KB of KV cache per "
            f"token per GPU, {share:.0%} of the target's {target_token / 1e3:,.1f} KB")
    room = layout.max_concurrent_sequences
    if room:
        budget = room * target_token * layout.context / max(1, layout.dp)
        kept = max(0.0, 1 - weights / budget) / (1 + share) if budget > 0 else 0.0
        line += f": the KV cache holds about {1 - kept:.0%} fewer tokens"
    return line + "."
