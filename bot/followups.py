"""The buttons under an answer for the usual next questions (full recompute, ZeRO-3, a bigger
GPU, double the sequence), and what a press asks the service.

A button's value carries everything needed to re-answer, so nothing is stored server-side:
``{"t": follow-up text, "p": the answer's parsed request, "c": the change}``. Pressing it asks
``t`` with ``previous = p | c`` (the change is applied even if the text were misread)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from bot.answer_view import LayoutView
from bot.constants import (
    ACTION_PREFIX,
    BIGGER_GPU,
    DEFAULT_GPU,
    DEFAULT_SEQ_LEN,
    GPU_LABELS,
    MAX_BUTTON_VALUE,
)

MAX_SEQ_LEN = 1 << 21


@dataclass(frozen=True, slots=True)
class NextQuestion:
    """One button: its action id suffix, label, follow-up text and the fields it changes."""

    key: str
    label: str
    text: str
    change: dict[str, Any]

    @property
    def action_id(self) -> str:
        return ACTION_PREFIX + self.key


@dataclass(frozen=True, slots=True)
class Press:
    """What a pressed button asks: the text, the previous request with the change applied,
    and the parsed request of the answer it was under."""

    text: str
    previous: dict[str, Any]
    base: dict[str, Any]


def next_questions(parsed: dict[str, Any], intent: str,
                   layout: LayoutView | None = None) -> list[NextQuestion]:
    """The buttons that make sense for this answer (none for help, clarify or nonsense);
    ``layout``: the layout the answer shows, so a button never asks for what it already has."""
    if intent not in ("train", "finetune", "infer", "time_cost") or not parsed:
        return []
    task = parsed.get("task", "train")
    shown_recompute = layout.recompute if layout is not None else None
    shown_zero = layout.zero_stage if layout is not None else None
    out: list[NextQuestion] = []
    if task != "infer" and "full" not in (parsed.get("recompute"), shown_recompute):
        out.append(NextQuestion("recompute", "Full recompute", "with full recompute",
                                {"recompute": "full"}))
    if (task != "infer" and 3 not in (parsed.get("zero_stage"), shown_zero)
            and not parsed.get("lora_rank")):
        out.append(NextQuestion("zero3", "ZeRO-3", "with zero-3", {"zero_stage": 3}))
    gpu = parsed.get("gpu")
    if isinstance(gpu, str) and gpu in BIGGER_GPU:
        bigger = BIGGER_GPU[gpu]
        label = GPU_LABELS.get(bigger, bigger)
        out.append(NextQuestion("bigger_gpu", f"Bigger GPU: {label}", f"what about on {bigger}?",
                                {"gpu": bigger}))
    elif gpu is None:
        label = GPU_LABELS[DEFAULT_GPU]
        out.append(NextQuestion("pick_gpu", f"On {label}s", f"on {DEFAULT_GPU}",
                                {"gpu": DEFAULT_GPU}))
    seq = parsed.get("seq_len")
    seq = seq if isinstance(seq, int) and seq > 0 else DEFAULT_SEQ_LEN
    if seq * 2 <= MAX_SEQ_LEN:
        what = "context" if task == "infer" else "sequence"
        out.append(NextQuestion("double_seq", f"Double the {what} ({seq * 2:,})",
                                f"what about seq {seq * 2}?", {"seq_len": seq * 2}))
    return out


def button_value(question: NextQuestion, parsed: dict[str, Any]) -> str | None:
    """The button's value, or None when the request is too big for Slack's 2000 characters."""
    value = json.dumps({"t": question.text, "p": parsed, "c": question.change},
                       separators=(",", ":"), ensure_ascii=False)
    return value if len(value) <= MAX_BUTTON_VALUE else None


def decode_press(value: str | None) -> Press | None:
    """A button value back to what it asks; None for anything that is not ours."""
    try:
        data = json.loads(value or "")
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    text, base, change = data.get("t"), data.get("p"), data.get("c", {})
    if not isinstance(text, str) or not isinstance(base, dict) or not isinstance(change, dict):
        return None
    return Press(text=text, previous={**base, **change}, base=base)
