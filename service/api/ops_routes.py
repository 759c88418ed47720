"""Operations: ``/healthz`` (the process), ``/readyz`` (dependencies), ``/metrics``."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import BaseModel, Field

from service.api.deps import ServicesDep

router = APIRouter(tags=["operations"])


class Health(BaseModel):
    status: str = Field(description="ok", examples=["ok"])


class Ready(BaseModel):
    status: str = Field(description="ok, or degraded when Redis is down (estimates for "
                        "built-in models still work)", examples=["ok"])
    redis: str = Field(description="up, down, or not-configured (embedded store)",
                       examples=["up"])
    store: str = Field(description="redis or embedded", examples=["redis"])


@router.get("/healthz", summary="Liveness: the process answers", response_model=None,
            responses={200: {"model": Health, "description": "Alive"}})
async def healthz() -> JSONResponse:
    return JSONResponse({"status": "ok"})


@router.get("/readyz", summary="Readiness and dependencies", response_model=None,
            responses={200: {"model": Ready, "description": "Ready (always 200: the service "
                             "answers estimates with or without Redis)"}})
async def readyz(svc: ServicesDep) -> JSONResponse:
    """Always 200 while the process can answer estimates; `redis` says whether Redis is up.
    A dead Redis is not re-tried on every probe: the circuit breaker answers until its
    cool-down is over."""
    if svc.store.kind == "embedded":
        svc.metrics.redis_up.set(1)
        return JSONResponse({"status": "ok", "redis": "not-configured", "store": "embedded"})
    up = await svc.store.ping()
    svc.metrics.redis_up.set(1 if up else 0)
    return JSONResponse({"status": "ok" if up else "degraded", "redis": "up" if up else "down",
                         "store": "redis"})


@router.get("/metrics", summary="Prometheus metrics", response_class=Response,
            responses={200: {"content": {CONTENT_TYPE_LATEST: {}},
                             "description": "Prometheus text format"}})
async def metrics(svc: ServicesDep) -> Response:
    """Request latency by route, estimate and planner time, cache hits and misses, Redis
    errors."""
    return Response(generate_latest(svc.metrics.registry), media_type=CONTENT_TYPE_LATEST)
