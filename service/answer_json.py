"""The answer as JSON: one pydantic adapter over the core's answer dataclasses, for the API
body, the cache, the command line and the OpenAPI schema."""

from __future__ import annotations

from typing import Any

from pydantic import TypeAdapter

from service.asking.ask_types import AskAnswer
from service.core.report.answer_types import Answer

ANSWER = TypeAdapter(Answer)
ASK = TypeAdapter(AskAnswer)


def answer_bytes(answer: Answer) -> bytes:
    return ANSWER.dump_json(answer)


def answer_dict(answer: Answer) -> dict[str, Any]:
    data: dict[str, Any] = ANSWER.dump_python(answer, mode="json")
    return data


def answer_from_dict(data: dict[str, Any]) -> Answer:
    """A cached answer's JSON back to the typed answer (it was made by ``answer_dict``)."""
    return ANSWER.validate_python(data)


def ask_bytes(result: AskAnswer) -> bytes:
    return ASK.dump_json(result)


def ask_dict(result: AskAnswer) -> dict[str, Any]:
    data: dict[str, Any] = ASK.dump_python(result, mode="json")
    return data
