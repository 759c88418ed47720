"""The answer as JSON: one pydantic adapter over the core's answer dataclasses, for the API
body, the cache, the command line and the OpenAPI schema."""

from __future__ import annotations

import json
from typing import Any

from pydantic import TypeAdapter

from service.asking.ask_types import AskAnswer
from service.core.report.answer_types import Answer

ANSWER = TypeAdapter(Answer)
ASK = TypeAdapter(AskAnswer)
LINK_TAIL = '"link":null}'


def answer_bytes(answer: Answer) -> bytes:
    return ANSWER.dump_json(answer)


def answer_text(answer: Answer) -> str:
    """A link-less answer as compact JSON text: what the shared cache keeps and what a worker
    process sends back (a string crosses a process boundary far cheaper than the dataclasses)."""
    if answer.link is not None:
        raise ValueError("answer_text is for answers without their link")
    return ANSWER.dump_json(answer).decode()


def text_with_link(text: str, url: str) -> bytes:
    """``answer_text``'s JSON with the permalink put in, as the response body: ``link`` is the
    answer's last field, so its ``null`` is the text's tail (no parsing, no second dump)."""
    if not text.endswith(LINK_TAIL):
        raise ValueError("not an answer_text document")
    return (text[:-len(LINK_TAIL)] + '"link":' + json.dumps(url, ensure_ascii=False)
            + "}").encode()


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
