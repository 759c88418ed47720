"""The permalink's query (``GET /v1/estimate?...``) read into a request: empty fields mean "not
stated" (a browser's form sends them), a field given twice is an error."""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from pydantic import ValidationError

from service.core.job.request import EstimateRequest
from service.permalink import decode_arch
from service.schemas.estimate_schemas import EstimateQuery


def typed_values(request: Request) -> dict[str, str]:
    """The query's non-empty fields as typed (the last one where a field is repeated)."""
    return {name: value for name, value in request.query_params.multi_items() if value != ""}


def parse_query(request: Request) -> EstimateRequest:
    raw: dict[str, str] = {}
    repeated = []
    for name, value in request.query_params.multi_items():
        if value == "":
            continue  # an empty form field means "not stated"
        if name in raw:
            repeated.append(name)
        raw[name] = value
    errors: list[dict[str, Any]] = [
        {"type": "repeated", "loc": ("query", name), "msg": "is given more than once",
         "input": None} for name in repeated]
    try:
        parsed = EstimateQuery.model_validate(raw)
    except ValidationError as exc:
        errors += [{**e, "loc": ("query", *e["loc"])} for e in exc.errors()]
        raise RequestValidationError(errors) from exc
    if errors:
        raise RequestValidationError(errors)
    stated = parsed.model_dump(exclude_none=True)
    if "arch" in stated:
        stated["arch"] = decode_arch(stated["arch"])
    return EstimateRequest(**stated)
