"""Where registered models and cached estimates live: Redis, or an embedded in-process store.

Both implement :class:`Store`; ``open_store`` picks one from the settings.
"""

from __future__ import annotations

from collections.abc import Callable

from service.settings import Settings
from service.store.base import Store, StoreUnavailable
from service.store.memory import MemoryStore

__all__ = ["MemoryStore", "Store", "StoreUnavailable", "open_store"]


def open_store(settings: Settings, on_error: Callable[[str], None] | None = None) -> Store:
    """Redis when ``FITCHECK_REDIS_URL`` is set, else the embedded store."""
    if settings.redis_url:
        from service.store.redis import RedisStore  # local: redis loads only when configured

        return RedisStore(settings, on_error=on_error)
    return MemoryStore(max_entries=settings.memory_cache_entries)
