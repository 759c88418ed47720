"""What the worker processes run (``work_pool.py``): the engine's answer to a request as the
JSON text the shared cache keeps, made there rather than on the event loop. Only that text and
two timings come back: unpickling the answer's dataclasses cost the server process more CPU
than the text does to send on as a response (``text_with_link``) or to read back.

The engine's errors (bad input, unknown names) come back as values and are raised again on the
server's side (``raise_error``): their constructors take more than a message, so they do not
survive pickling as exceptions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from service.answer_json import answer_text
from service.answers import compute_answer
from service.core.errors import InvalidInput, UnknownName
from service.core.hardware.fleet import fleet_gpus
from service.core.job.request import EstimateRequest


@dataclass(frozen=True, slots=True)
class Outcome:
    text: str  # the link-less answer's JSON (``answer_text``; "" with an error)
    estimate_s: float = 0.0
    planner_s: float = 0.0
    error: tuple[str, tuple[Any, ...]] | None = None  # ("invalid" | "unknown", its arguments)


def answer_outcome(request: EstimateRequest, fits_on: bool,
                   fleet_ids: tuple[str, ...] | None) -> Outcome:
    """``compute_answer`` in a worker; ``fleet_ids``: the fix fleet's GPU ids (None: default)."""
    try:
        fleet = fleet_gpus(fleet_ids) if fleet_ids is not None else None
        computed = compute_answer(request, fits_on=fits_on, fleet=fleet)
    except InvalidInput as exc:
        return Outcome("", error=("invalid", (exc.field, exc.message, exc.accepted)))
    except UnknownName as exc:
        return Outcome("", error=("unknown", (exc.kind, exc.name, exc.suggestions)))
    return Outcome(answer_text(computed.answer), computed.estimate_s, computed.planner_s)


def raise_error(error: tuple[str, tuple[Any, ...]]) -> None:
    kind, args = error
    if kind == "invalid":
        raise InvalidInput(*args)
    raise UnknownName(*args)
