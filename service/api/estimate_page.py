"""``GET /v1/estimate`` for a browser: the report, or, on every other outcome, the form again
with what was typed, each problem next to its field and the closest names as links, with the
problem's status (422 bad value or unknown name, 503 registry down or planner busy). API clients never come
here: they get the problem+json of ``problems.py``."""

from __future__ import annotations

import contextlib
import logging
from urllib.parse import urlencode, urlsplit

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from service.api.deps import base_url
from service.api.estimate_query import parse_query, typed_values
from service.api.problems import engine_error, validation_errors
from service.core.errors import InvalidInput, UnknownName
from service.core.hardware.gpus import find_gpu
from service.core.job.request import EstimateRequest
from service.services import Services
from service.store.base import StoreUnavailable
from service.web.form import FormState, Problem, render_form_page
from service.web.form_fields import FIELDS
from service.web.report import render_report
from service.work_pool import PoolBusy

log = logging.getLogger("fitcheck")
VARY = {"Vary": "Accept"}


async def estimate_page(request: Request, svc: Services) -> Response:
    values = typed_values(request)
    try:
        return await _report(request, svc)
    except RequestValidationError as exc:
        problems = [_problem(e) for e in validation_errors(exc)]
        return _form(values, problems + await _name_problems(values, request, svc), 422)
    except InvalidInput as exc:
        return _form(values, [_problem(engine_error(exc))], 422)
    except UnknownName as exc:
        return _form(values, [unknown_name(exc, request)], 422)
    except StoreUnavailable as exc:
        seconds = max(1, round(exc.retry_after + 0.5))
        notice = (f"The model registry (Redis) is unreachable, so a registered model cannot be "
                  f"looked up now. Try again in {seconds} s; built-in models still work.")
        return _form(values, [], 503, notice, {"Retry-After": str(seconds)})
    except PoolBusy as exc:
        notice = (f"The planner is busy with other questions ({exc.reason}). Try again in "
                  f"{exc.retry_after_s} s.")
        return _form(values, [], 503, notice, {"Retry-After": str(exc.retry_after_s)})
    except Exception:  # a bug: logged with the request id, and the person keeps the form
        log.exception("unhandled error while rendering an estimate page")
        return _form(values, [], 500, "Something went wrong on our side (it has been logged). "
                     "Your request is kept below.")


async def _report(request: Request, svc: Services) -> Response:
    answer = await svc.estimates.answer(parse_query(request), base_url(request, svc),
                                        fits_on=True)
    canonical = urlsplit(answer.link or "")
    if (canonical.path, canonical.query) != (request.url.path, request.url.query):
        # a form's URL (empty fields, aliases) -> the permalink, so the address bar is it
        return RedirectResponse(f"{canonical.path}?{canonical.query}", 303, headers=VARY)
    return HTMLResponse(render_report(answer), headers=VARY)


async def _name_problems(values: dict[str, str], request: Request, svc: Services
                         ) -> list[Problem]:
    """Unknown model and GPU names, told in the same page as the other problems."""
    problems = []
    with contextlib.suppress(StoreUnavailable, InvalidInput, UnknownName):
        if "gpu" in values:
            try:
                find_gpu(values["gpu"])
            except UnknownName as exc:
                problems.append(unknown_name(exc, request))
        if "model" in values:
            try:
                await svc.estimates.prepare(EstimateRequest(model=values["model"]))
            except UnknownName as exc:
                problems.insert(0, unknown_name(exc, request))
    return problems


def _problem(error: dict[str, str]) -> Problem:
    return Problem(error["field"] if error["field"] != "body" else "", error["message"],
                   error["accepted"])


def unknown_name(exc: UnknownName, request: Request) -> Problem:
    """'unknown model 'mistral large 2'', with links to the estimate under each close name."""
    field = "model" if exc.kind == "model" else "gpu"
    links = tuple((name, with_value(request, field, name)) for name in exc.suggestions)
    listing = "/v1/models" if exc.kind == "model" else "/v1/gpus"
    return Problem(field, f"unknown {exc.kind} {exc.name!r}", f"a name from {listing}", links)


def with_value(request: Request, field: str, value: str) -> str:
    """This request's URL with ``field`` set to ``value`` (empty fields dropped)."""
    items = [(k, v) for k, v in request.query_params.multi_items() if v != "" and k != field]
    return f"{request.url.path}?{urlencode([*items, (field, value)])}"


def _form(values: dict[str, str], problems: list[Problem], status: int, notice: str = "",
          headers: dict[str, str] | None = None) -> HTMLResponse:
    order = list(FIELDS)
    problems.sort(key=lambda p: order.index(p.field) if p.field in order else len(order))
    state = FormState(values, tuple(problems), notice)
    return HTMLResponse(render_form_page(state), status_code=status,
                        headers={**VARY, **(headers or {})})
