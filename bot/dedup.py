"""Remember what the bot has seen: Slack event ids (so a duplicate delivery is answered once)
and the threads it answered in (so a follow-up there needs no mention). Redis ``SET NX`` with a
TTL, shared by every replica; in memory when Redis is not configured, and for the moment Redis
fails (a dead Redis must never silence the bot)."""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from typing import Protocol

log = logging.getLogger("fitcheck_bot")


class SeenStore(Protocol):
    kind: str

    async def claim(self, key: str, ttl_s: int) -> bool:
        """True the first time ``key`` is claimed within ``ttl_s``; False afterwards."""
        ...

    async def exists(self, key: str) -> bool: ...

    async def close(self) -> None: ...


class MemorySeen:
    """One process's memory, bounded (oldest entries go first)."""

    kind = "memory"

    def __init__(self, max_entries: int = 100_000) -> None:
        self._expiry: OrderedDict[str, float] = OrderedDict()
        self._max = max_entries

    def _alive(self, key: str, now: float) -> bool:
        expiry = self._expiry.get(key)
        if expiry is None:
            return False
        if expiry <= now:
            del self._expiry[key]
            return False
        return True

    async def claim(self, key: str, ttl_s: int) -> bool:
        now = time.monotonic()
        if self._alive(key, now):
            return False
        self._expiry[key] = now + ttl_s
        self._expiry.move_to_end(key)
        while len(self._expiry) > self._max:
            self._expiry.popitem(last=False)
        return True

    async def exists(self, key: str) -> bool:
        return self._alive(key, time.monotonic())

    async def close(self) -> None:
        self._expiry.clear()


class RedisSeen:
    """Redis under a key prefix, with short timeouts; on any Redis error, memory instead."""

    kind = "redis"

    def __init__(self, url: str, prefix: str, timeout_s: float = 0.2) -> None:
        from redis.asyncio import Redis

        self._redis = Redis.from_url(url, socket_timeout=timeout_s,
                                     socket_connect_timeout=timeout_s)
        self._prefix = prefix
        self._fallback = MemorySeen()

    async def claim(self, key: str, ttl_s: int) -> bool:
        try:
            return bool(await self._redis.set(self._prefix + key, "1", nx=True, ex=ttl_s))
        except Exception as exc:  # redis errors and timeouts alike
            log.warning("redis unavailable for dedup, using memory: %s", type(exc).__name__)
            return await self._fallback.claim(key, ttl_s)

    async def exists(self, key: str) -> bool:
        try:
            return bool(await self._redis.exists(self._prefix + key))
        except Exception as exc:
            log.warning("redis unavailable, using memory: %s", type(exc).__name__)
            return await self._fallback.exists(key)

    async def close(self) -> None:
        await self._redis.aclose()


def open_store(redis_url: str | None, prefix: str) -> SeenStore:
    return RedisSeen(redis_url, prefix) if redis_url else MemorySeen()
