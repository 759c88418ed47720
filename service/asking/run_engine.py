"""Run the core for parsed fields: the estimate, and the planner when a GPU type is named (the
fewest GPUs of that type, or the best layout on the stated count). Engine errors come back as
values, never raised."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from service.answers import build_answer
from service.core.errors import InvalidInput, UnknownName
from service.core.job.request import EstimateRequest
from service.core.memory.breakdown import Estimate
from service.core.planning.plan_types import Plan
from service.parser.followup import REQUEST_FIELDS
from service.parser.normalize import safe_echo
from service.parser.rules import invalid_sentence


@dataclass(frozen=True, slots=True)
class Outcome:
    """One engine run: the API's JSON with the estimate and plan behind it, or what went wrong."""

    answer: dict[str, Any] | None = None
    estimate: Estimate | None = None
    plan: Plan | None = None
    error: str | None = None  # a friendly sentence
    bad_field: str | None = None  # the request field the engine rejected
    unknown: UnknownName | None = None


def run(fields: dict[str, Any]) -> Outcome:
    """The estimate (and plan) for the fields; errors as an ``Outcome`` with ``error`` set."""
    try:
        request = EstimateRequest(**{k: v for k, v in fields.items() if k in REQUEST_FIELDS})
        answer = build_answer(request)  # the same body POST /v1/estimate answers
        return Outcome(answer.body, answer.estimate, answer.plan)
    except InvalidInput as exc:
        field = exc.field.split(".", 1)[0]
        return Outcome(error=invalid_sentence(exc), bad_field=field if field in REQUEST_FIELDS else None)
    except UnknownName as exc:
        return Outcome(error=_unknown(exc), unknown=exc,
                       bad_field="model" if exc.kind == "model" else "gpu")


def _unknown(exc: UnknownName) -> str:
    text = f"I don't know the {exc.kind} '{safe_echo(exc.name)}'"
    ids = [safe_echo(s) for s in exc.suggestions]
    if not ids:
        return text + "."
    choice = ids[0] if len(ids) == 1 else ", ".join(ids[:-1]) + " or " + ids[-1]
    return f"{text}. Did you mean {choice}?"
