"""What answering one chat question returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class AskAnswer:
    """What ``ask`` returns; ``parsed`` uses the request field names of ``POST /v1/estimate``."""

    intent: str
    parsed: dict[str, Any]
    answer: dict[str, Any] | None
    reply: str
    clarify: str | None = None
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"intent": self.intent, "parsed": self.parsed, "answer": self.answer,
                "reply": self.reply, "clarify": self.clarify}
