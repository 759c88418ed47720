"""The ASGI app: ``service.app:app``, built by ``create_app`` from the settings.

The lifespan opens the store (Redis, or the embedded one), the outbound HTTP client and the
planner's worker pool (``work_pool.py``), and closes them on shutdown.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from pydantic.json_schema import models_json_schema

from service.api import (
    ask_routes,
    docs_routes,
    estimate_routes,
    gpu_routes,
    model_routes,
    ops_routes,
    problems,
)
from service.limits import BodyLimitMiddleware
from service.observability import Metrics, ObservabilityMiddleware, log, setup_logging
from service.schemas.problem import Problem
from service.services import Services
from service.settings import Settings
from service.web import pages
from service.work_pool import work_pool

DESCRIPTION = """How much GPU memory, and how many GPUs, does this training, fine-tuning or
serving job need? Every answer has a permalink (`link`): open it in a browser for the report.
Errors are `application/problem+json` (RFC 9457)."""


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()
    metrics = Metrics()
    setup_logging(settings.log_level)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        pool = work_pool(settings)
        if pool is not None:
            pool.start()
        services = Services.open(settings, metrics, pool)
        app.state.services = services
        ready = await services.store.ping()
        log.info("started", extra={"fields": {"store": services.store.kind, "ready": ready}})
        try:
            yield
        finally:
            await services.close()
            app.state.services = None

    app = FastAPI(title="fitcheck", version="0.1.0", description=DESCRIPTION,
                  lifespan=lifespan, docs_url=None, redoc_url=None)  # docs_routes: offline
    app.state.settings = settings
    app.state.metrics = metrics
    app.state.services = None
    problems.install(app)
    for module in (estimate_routes, model_routes, gpu_routes, ops_routes, ask_routes, pages,
                   docs_routes):
        app.include_router(module.router)
    docs_routes.mount_assets(app)
    app.add_middleware(BodyLimitMiddleware, max_body_bytes=settings.max_body_bytes)
    app.add_middleware(ObservabilityMiddleware, metrics=metrics)
    app.openapi = lambda: _openapi(app)  # type: ignore[method-assign]
    return app


def _openapi(app: FastAPI) -> dict[str, Any]:
    """The generated schema plus the problem and answer components the routes refer to."""
    if app.openapi_schema:
        return app.openapi_schema
    schema = get_openapi(title=app.title, version=app.version, description=app.description,
                         routes=app.routes)
    _, extra = models_json_schema([(Problem, "serialization")],
                                  ref_template="#/components/schemas/{model}")
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    components.update(extra.get("$defs", {}))
    components.pop("HTTPValidationError", None)
    components.pop("ValidationError", None)
    for path in schema.get("paths", {}).values():
        for operation in path.values():
            for response in operation.get("responses", {}).values():
                content = response.get("content", {})
                if "application/problem+json" in content:
                    content.pop("application/json", None)
    if app.state.settings.api_key:
        _declare_security(schema)
    app.openapi_schema = schema
    return schema


def _declare_security(schema: dict[str, Any]) -> None:
    """Writes need the API key: a bearer token or an X-API-Key header."""
    schema["components"]["securitySchemes"] = {
        "bearer": {"type": "http", "scheme": "bearer", "description": "FITCHECK_API_KEY"},
        "apiKey": {"type": "apiKey", "in": "header", "name": "X-API-Key",
                   "description": "FITCHECK_API_KEY"},
    }
    schema["paths"]["/v1/models"]["post"]["security"] = [{"bearer": []}, {"apiKey": []}]


app = create_app()
