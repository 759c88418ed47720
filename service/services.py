"""What the routes share: settings, store, registry, estimates, metrics, the HTTP client and
the planner's worker pool."""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from service.core.hardware.fleet import fleet_gpus
from service.estimates import Estimates
from service.observability import Metrics
from service.registry import Registry
from service.settings import Settings
from service.store import Store, open_store
from service.work_pool import WorkPool


@dataclass(slots=True)
class Services:
    settings: Settings
    metrics: Metrics
    store: Store
    registry: Registry
    estimates: Estimates
    http: httpx.AsyncClient  # outbound calls (shared connection pool), closed on shutdown

    pool: WorkPool | None = None  # the planner's workers (the app's; none on the command line)

    @classmethod
    def open(cls, settings: Settings, metrics: Metrics, pool: WorkPool | None = None) -> Services:
        store = open_store(settings, on_error=metrics.redis_error)
        registry = Registry(store)
        fleet = fleet_gpus(settings.fleet) if settings.fleet else None
        estimates = Estimates(store, registry, metrics, settings.cache_ttl_s, fleet, pool)
        http = httpx.AsyncClient(timeout=httpx.Timeout(2.0, connect=0.5))
        return cls(settings, metrics, store, registry, estimates, http, pool)

    async def close(self) -> None:
        await self.http.aclose()
        await self.store.close()
        if self.pool is not None:
            self.pool.close()
