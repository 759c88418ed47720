"""Errors as RFC 9457 problem details (``application/problem+json``), never a stack trace."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from service.core.errors import InvalidInput, UnknownName
from service.schemas.accepted import REQUEST_FIELDS, accepted_for, number_message
from service.store.base import StoreUnavailable
from service.work_pool import PoolBusy

PROBLEM = "application/problem+json"
BASE = "https://fitcheck.dev/problems/"
log = logging.getLogger("fitcheck")


class ApiProblem(Exception):
    """An HTTP problem raised by a route: 401, 409, 503 ..."""

    def __init__(self, status: int, title: str, detail: str, kind: str = "",
                 headers: dict[str, str] | None = None, **extra: Any) -> None:
        super().__init__(detail)
        self.status, self.title, self.detail, self.kind = status, title, detail, kind
        self.headers = headers or {}
        self.extra = extra


def problem(status: int, title: str, detail: str, kind: str = "", request: Request | None = None,
            headers: dict[str, str] | None = None, **extra: Any) -> JSONResponse:
    body: dict[str, Any] = {"type": BASE + kind if kind else "about:blank", "title": title,
                            "status": status, "detail": detail}
    if request is not None:
        body["instance"] = request.url.path
        body["request_id"] = getattr(request.state, "request_id", None)
    body.update(extra)
    return JSONResponse(body, status_code=status, media_type=PROBLEM, headers=headers)


def invalid(errors: list[dict[str, str]], request: Request | None) -> JSONResponse:
    names = ", ".join(e["field"] for e in errors)
    return problem(422, "Invalid input", f"bad field(s): {names}", "invalid-input", request,
                   errors=errors)


def input_error(exc: InvalidInput, prefix: str = "") -> dict[str, str]:
    """The engine's InvalidInput as a field error; a size field's accepted range with its
    reason (``size_limits``)."""
    field = exc.field if not prefix or exc.field.startswith(prefix) else prefix + exc.field
    accepted = accepted_for(field) if field in REQUEST_FIELDS and "out of range" in exc.message \
        else exc.accepted
    return {"field": field, "message": exc.message, "accepted": accepted}


def engine_error(exc: InvalidInput) -> dict[str, str]:
    """An InvalidInput raised while answering: request fields as they are, the rest under arch."""
    own = exc.field.split(".")[0] in REQUEST_FIELDS
    return input_error(exc, "" if own else "arch.")


def unknown_name(exc: UnknownName, request: Request | None) -> JSONResponse:
    """An unknown model or GPU: 404 where it names the resource looked up (``GET
    /v1/models/{id}``, ``/v1/gpus/{id}``), else a bad value of a request field, 422 with the
    field, the closest names and the same ``errors`` list as every other bad field."""
    hint = f" Did you mean {' or '.join(exc.suggestions)}?" if exc.suggestions else ""
    listing = "/v1/models" if exc.kind == "model" else "/v1/gpus"
    field = "model" if exc.kind == "model" else "gpu"
    detail = f"unknown {exc.kind} {exc.name!r}.{hint} The full list: GET {listing}."
    lookup = request is not None and request.url.path.startswith((listing + "/",))
    error = {"field": field, "message": f"unknown {exc.kind} {exc.name!r}",
             "accepted": ", ".join(exc.suggestions) or f"a name from GET {listing}"}
    extra: dict[str, Any] = {"field": field, "name": exc.name, "suggestions": exc.suggestions}
    if not lookup:
        extra["errors"] = [error]
    return problem(404 if lookup else 422, f"Unknown {exc.kind}", detail, f"unknown-{exc.kind}",
                   request, **extra)


def unavailable(exc: StoreUnavailable, request: Request | None, what: str) -> JSONResponse:
    seconds = max(1, round(exc.retry_after + 0.5))
    return problem(503, "Service Unavailable", f"{what}: the model registry (Redis) is "
                   f"unreachable. Retry in {seconds} s.", "registry-unavailable", request,
                   headers={"Retry-After": str(seconds)}, retry_after_s=seconds)


def busy(exc: PoolBusy, request: Request | None) -> JSONResponse:
    seconds = exc.retry_after_s
    return problem(503, "Service Unavailable", f"the planner is busy ({exc.reason}). Retry in "
                   f"{seconds} s.", "planner-busy", request,
                   headers={"Retry-After": str(seconds)}, retry_after_s=seconds)


def validation_errors(exc: RequestValidationError) -> list[dict[str, str]]:
    """Pydantic's errors as field errors: the field, what is wrong, what it accepts."""
    errors = []
    for err in exc.errors():
        if err.get("type") == "json_invalid":  # its loc is the character where parsing stopped
            where = next((p for p in err.get("loc", ()) if isinstance(p, int)), None)
            errors.append({"field": "body", "message": "is not valid JSON" + (
                f" (stopped at character {where})" if where is not None else ""),
                "accepted": "a JSON object of request fields"})
            continue
        loc = [str(p) for p in err.get("loc", ()) if p not in ("body", "query", "path")]
        field = ".".join(loc) or "body"
        top = loc[0] if loc else "body"
        kind = str(err.get("type", ""))
        message = number_message(field, kind, err.get("input")) if len(loc) == 1 else None
        errors.append({"field": field, "message": message or str(err.get("msg", "is not valid")),
                       "accepted": accepted_for(top, kind)})
    return errors


def install(app: FastAPI) -> None:
    """Register the handlers that turn every error into a problem response."""

    async def on_validation(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        sent = request.headers.get("content-type", "")
        if request.method == "POST" and "json" not in sent.lower() and any(
                tuple(e.get("loc", ())) == ("body",) for e in exc.errors()):
            # a body sent as a form (curl -d without -H): the body was never read as JSON
            return problem(415, "Unsupported media type",
                           f"the body was sent as {sent or 'no content type'}: send JSON with "
                           "Content-Type: application/json", "unsupported-media-type", request)
        return invalid(validation_errors(exc), request)

    async def on_invalid(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, InvalidInput)
        return invalid([engine_error(exc)], request)

    async def on_unknown(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, UnknownName)
        return unknown_name(exc, request)

    async def on_http(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        headers = dict(exc.headers or {})
        if exc.status_code == 405:
            headers["Allow"] = ", ".join(_allowed(app, request))
        return problem(exc.status_code, _TITLES.get(exc.status_code, "Error"), str(exc.detail),
                       request=request, headers=headers)

    async def on_api(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, ApiProblem)
        return problem(exc.status, exc.title, exc.detail, exc.kind, request, exc.headers,
                       **exc.extra)

    async def on_store(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StoreUnavailable)
        return unavailable(exc, request, "cannot answer now")

    async def on_busy(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, PoolBusy)
        return busy(exc, request)

    async def on_error(request: Request, exc: Exception) -> JSONResponse:
        log.error("unhandled error", exc_info=exc)
        return problem(500, "Internal Server Error", "an unexpected error; it has been logged "
                       "with this request id", "internal", request)

    app.add_exception_handler(RequestValidationError, on_validation)
    app.add_exception_handler(InvalidInput, on_invalid)
    app.add_exception_handler(UnknownName, on_unknown)
    app.add_exception_handler(StarletteHTTPException, on_http)
    app.add_exception_handler(ApiProblem, on_api)
    app.add_exception_handler(StoreUnavailable, on_store)
    app.add_exception_handler(PoolBusy, on_busy)
    app.add_exception_handler(Exception, on_error)


def _allowed(app: FastAPI, request: Request) -> list[str]:
    """Every method of every route on this path (Starlette names only the first route's)."""
    methods: set[str] = set()
    for route in app.routes:
        match, _ = route.matches({**request.scope, "method": "GET"})
        if match != Match.NONE:
            methods |= set(getattr(route, "methods", None) or ())
    return sorted(methods)


_TITLES = {400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 405: "Method Not Allowed",
           406: "Not Acceptable", 409: "Conflict", 413: "Content Too Large",
           415: "Unsupported Media Type", 503: "Service Unavailable"}
