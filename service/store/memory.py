"""The embedded store: one process, no Redis. Models last as long as the process."""

from __future__ import annotations

import time
from collections import OrderedDict


class MemoryStore:
    """Dicts behind the :class:`~service.store.base.Store` interface; the cache is a bounded LRU."""

    kind = "embedded"

    def __init__(self, max_entries: int = 2048) -> None:
        self._models: dict[str, str] = {}
        self._cache: OrderedDict[str, tuple[float, str]] = OrderedDict()
        self._max_entries = max_entries

    async def ping(self) -> bool:
        return True

    async def add_model(self, model_id: str, document: str) -> str | None:
        existing = self._models.get(model_id)
        if existing is None:
            self._models[model_id] = document
        return existing

    async def get_model(self, model_id: str) -> str | None:
        return self._models.get(model_id)

    async def list_models(self) -> dict[str, str]:
        return dict(self._models)

    async def cache_get(self, key: str) -> str | None:
        item = self._cache.get(key)
        if item is None:
            return None
        expires, value = item
        if expires < time.monotonic():
            del self._cache[key]
            return None
        self._cache.move_to_end(key)
        return value

    async def cache_set(self, key: str, value: str, ttl_s: int) -> None:
        self._cache[key] = (time.monotonic() + ttl_s, value)
        self._cache.move_to_end(key)
        while len(self._cache) > self._max_entries:
            self._cache.popitem(last=False)

    async def close(self) -> None:
        self._cache.clear()
