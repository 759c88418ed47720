"""What the routes share: settings, store, registry, estimates, metrics and the HTTP client."""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from service.core.hardware.fleet import fleet_gpus
from service.estimates import Estimates
from service.observability import Metrics
from service.registry import Registry
from service.settings import Settings
from service.store import Store, open_store


@dataclass(slots=True)
class Services:
    settings: Settings
    metrics: Metrics
    store: Store
    registry: Registry
    estimates: Estimates
    http: httpx.AsyncClient  # outbound calls (shared connection pool), closed on shutdown

    @classmethod
    def open(cls, settings: Settings, metrics: Metrics) -> Services:
        store = open_store(settings, on_error=metrics.redis_error)
        registry = Registry(store)
        fleet = fleet_gpus(settings.fleet) if settings.fleet else None
        estimates = Estimates(store, registry, metrics, settings.cache_ttl_s, fleet)
        http = httpx.AsyncClient(timeout=httpx.Timeout(2.0, connect=0.5))
        return cls(settings, metrics, store, registry, estimates, http)

    async def close(self) -> None:
        await self.http.aclose()
        await self.store.close()
