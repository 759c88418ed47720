"""Metrics (Prometheus), structured JSON logs and request ids.

Every app has its own ``CollectorRegistry`` (tests build many apps in one process). Routes are
labelled by their template (``/v1/models/{model_id}``), never by the raw path.
"""

from __future__ import annotations

import contextvars
import json
import logging
import re
import sys
import time
import uuid
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from starlette.types import ASGIApp, Message, Receive, Scope, Send

request_id_var: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")
REQUEST_ID_HEADER = "x-request-id"
_VALID_ID = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")
log = logging.getLogger("fitcheck")


class Metrics:
    """The service's Prometheus metrics, in one registry."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.request_seconds = Histogram(
            "fitcheck_http_request_duration_seconds", "HTTP request latency by route",
            ["method", "route", "status"], registry=r,
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5))
        self.estimate_seconds = Histogram(
            "fitcheck_estimate_seconds", "time in the engine's estimate", registry=r,
            buckets=(0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05))
        self.planner_seconds = Histogram(
            "fitcheck_planner_seconds", "time in the planner", registry=r,
            buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0))
        self.cache_hits = Counter("fitcheck_cache_hits_total", "estimate cache hits", registry=r)
        self.cache_misses = Counter("fitcheck_cache_misses_total", "estimate cache misses",
                                    registry=r)
        self.redis_errors = Counter("fitcheck_redis_errors_total", "failed Redis operations",
                                    ["operation"], registry=r)
        self.redis_up = Gauge("fitcheck_redis_up", "1 when Redis answered the last readiness "
                              "check (embedded store: 1)", registry=r)

    def redis_error(self, operation: str) -> None:
        self.redis_errors.labels(operation=operation).inc()


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, request id and extras."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
            "request_id": request_id_var.get(),
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            entry.update(fields)
        if record.exc_info:
            entry["error"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


def setup_logging(level: str) -> None:
    """JSON logs on stderr for the fitcheck logger (uvicorn's access log is turned off)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    log.handlers = [handler]
    log.setLevel(level.upper() if level.upper() in logging.getLevelNamesMapping() else "INFO")
    log.propagate = False


class ObservabilityMiddleware:
    """Request id (from ``X-Request-ID`` when valid, else new), latency metric, access log."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = dict(scope["headers"]).get(REQUEST_ID_HEADER.encode(), b"").decode("latin-1")
        rid = given if _VALID_ID.match(given) else uuid.uuid4().hex
        token = request_id_var.set(rid)
        scope.setdefault("state", {})["request_id"] = rid
        status = 500
        start = time.perf_counter()

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"],
                                      (REQUEST_ID_HEADER.encode(), rid.encode())]
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            elapsed = time.perf_counter() - start
            route = getattr(scope.get("route"), "path", None) or "unmatched"
            self.metrics.request_seconds.labels(scope["method"], route, str(status)).observe(
                elapsed)
            log.info("request", extra={"fields": {
                "method": scope["method"], "path": scope["path"], "route": route,
                "status": status, "duration_ms": round(elapsed * 1000, 3)}})
            request_id_var.reset(token)
