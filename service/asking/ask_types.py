"""What answering one chat question returns, shaped as ``POST /v1/ask``'s JSON."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from service.core.report.answer_types import Answer


@dataclass(frozen=True, slots=True)
class CompareSide:
    label: str
    changes: dict[str, Any]
    answer: Answer | None
    error: str | None


@dataclass(frozen=True, slots=True)
class Comparison:
    field: str | None
    variants: list[CompareSide]


@dataclass(frozen=True, slots=True)
class AskAnswer:
    """``parsed`` uses the request field names of ``POST /v1/estimate``; ``answer`` is the
    estimate's answer (for a comparison, the first side's; all sides are under ``compare``);
    ``ignored``: what the question stated that was not used."""

    intent: str
    parsed: dict[str, Any]
    answer: Answer | None
    reply: str
    clarify: str | None = None
    notes: list[str] | None = None
    compare: Comparison | None = None
    ignored: list[str] | None = None
    link: str | None = None


class Refused(Exception):
    """The engine could not answer these fields: a friendly sentence and the field at fault."""

    def __init__(self, sentence: str, field: str | None, unknown: bool) -> None:
        super().__init__(sentence)
        self.sentence = sentence
        self.field = field
        self.unknown = unknown
