"""``POST /v1/estimate`` (JSON) and its permalink ``GET /v1/estimate?...`` (HTML or JSON)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from service.answer_json import answer_bytes
from service.api.deps import ServicesDep, base_url, wants_html
from service.api.estimate_page import estimate_page
from service.api.estimate_query import parse_query
from service.core.report.answer_types import Answer
from service.schemas.estimate_schemas import EstimateIn, EstimateQuery
from service.schemas.problem import PROBLEM_RESPONSES

router = APIRouter(prefix="/v1", tags=["estimate"])

ANSWER = {"model": Answer, "description": "The estimate, with the planner's answer when a "
          "GPU type is given. In `link`: its permalink."}


@router.post("/estimate", summary="Estimate per-GPU memory and GPU count",
             responses={200: ANSWER, **PROBLEM_RESPONSES}, response_model=None)
async def post_estimate(body: EstimateIn, request: Request, svc: ServicesDep) -> Response:  # type: ignore[valid-type]
    """Memory per GPU by component (integer bytes), whether it fits, the fewest GPUs and the
    layout that gets there, compute time and cost when `tokens` is given, every assumption and
    formula, and a permalink (`link`). Every field is optional; unstated ones are assumed and
    listed in `assumptions`."""
    stated = body.model_dump(exclude_none=True)  # type: ignore[attr-defined]
    answer = await svc.estimates.answer_json(stated, base_url(request, svc))
    return Response(answer, media_type="application/json")


def _query_parameters() -> list[dict[str, Any]]:
    schema = EstimateQuery.model_json_schema()
    params = []
    for name, prop in schema["properties"].items():
        inner = dict(prop)
        for key in ("default", "title"):
            inner.pop(key, None)
        description = inner.pop("description", "")
        examples = inner.pop("examples", [])
        variants = [v for v in inner.pop("anyOf", [inner]) if v.get("type") != "null"]
        param_schema = variants[0] if variants else {"type": "string"}
        params.append({"name": name, "in": "query", "required": False,
                       "description": description, "schema": param_schema,
                       **({"example": examples[0]} if examples else {})})
    return params


@router.get("/estimate", summary="Permalink: an estimate as an HTML report or JSON",
            response_class=HTMLResponse,
            responses={200: {**ANSWER, "content": {"text/html": {}, "application/json": {
                "schema": {"$ref": "#/components/schemas/Answer"}}}},
                303: {"description": "A browser asked with a non-canonical query (aliases, "
                      "empty form fields): redirect to the permalink"},
                **PROBLEM_RESPONSES},
            openapi_extra={"parameters": _query_parameters()})
async def get_estimate(request: Request, svc: ServicesDep) -> Response:
    """The request's fields as query parameters (what an answer's `link` holds). A browser
    (`Accept: text/html`) gets the report page: the verdict, a per-GPU memory chart against the
    GPU's capacity, the components with formulas and sources, the assumptions, the fits-on table
    across the catalog, time and cost. `Accept: application/json` gets the JSON answer."""
    if wants_html(request.headers.get("accept")):
        return await estimate_page(request, svc)  # the report, or the form with the problems
    answer = await svc.estimates.answer(parse_query(request), base_url(request, svc))
    return Response(answer_bytes(answer), media_type="application/json",
                    headers={"Vary": "Accept"})
