""""Cheapest way to fine-tune X?" with no method said: full fine-tuning is what is sized (the
request's default), so the reply also says what LoRA and QLoRA cost per hour, each the
cheapest catalog option: the method is usually the bigger saving (held-out set 22: a 70B's
cheapest full fine-tune is 40 A40s, its QLoRA one GPU)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from service.asking.ask_types import Refused
from service.core.report.answer_types import Answer
from service.render.slack_cheapest import cheapest_option

AnswerFields = Callable[..., Awaitable[Answer]]
METHODS = (("LoRA", {"finetune_method": "lora"}),
           ("QLoRA (4-bit NF4 base)", {"finetune_method": "qlora", "quantization": "nf4"}))


async def cheaper_methods(answer_fields: AnswerFields, merged: dict[str, Any],
                          cloud: str | None) -> str | None:
    """The line, or None where a method was said or the job is not a fine-tune."""
    if merged.get("task") != "finetune" or "finetune_method" in merged:
        return None
    options = []
    for name, changes in METHODS:
        try:
            answer = await answer_fields({**merged, **changes}, fits_on=True)
        except Refused:  # an option the engine refuses is left out; the reply stands
            continue
        best = cheapest_option(answer, cloud)
        if best is not None:
            options.append(f"{name}: {best}")
    if not options:
        return None
    return "Full fine-tuning is what is sized above; the cheapest per hour with " + \
        "; with ".join(options)
