"""Redis behind the :class:`~service.store.base.Store` interface, built to fail fast.

redis-py's defaults (5 s socket timeouts, 10 retries with back-off) would turn a dead Redis
into seconds per request. Here every command has a short connect/socket timeout (default
0.2 s), 0 or 1 retry, an overall deadline, and a :class:`CircuitBreaker`: after a failure, calls
fail at once (in microseconds) until the cool-down is over and one trial call gets through.

Keys (all under ``FITCHECK_REDIS_PREFIX``): ``models`` is a hash id -> JSON document with no
TTL (registered models are never evicted under ``volatile-*`` eviction policies); ``est:*``
are cached answers, each with a TTL.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError

from service.settings import Settings
from service.store.base import StoreUnavailable
from service.store.breaker import CircuitBreaker

T = TypeVar("T")
FAILURES = (RedisError, OSError, asyncio.TimeoutError)


class RedisStore:
    kind = "redis"

    def __init__(self, settings: Settings, on_error: Callable[[str], None] | None = None) -> None:
        assert settings.redis_url
        timeout = settings.redis_timeout_s
        self._client: Redis = Redis.from_url(
            settings.redis_url,
            socket_connect_timeout=timeout,
            socket_timeout=timeout,
            retry=Retry(NoBackoff(), settings.redis_retries),
            health_check_interval=0,
            decode_responses=True,
            max_connections=256,
        )
        self._deadline = timeout * (settings.redis_retries + 1) * 2 + 0.05
        self._prefix = settings.redis_prefix
        self._models_key = settings.redis_prefix + "models"
        self.breaker = CircuitBreaker(settings.breaker_cooldown_s)
        self._on_error = on_error or (lambda op: None)

    async def _call(self, op: str, action: Callable[[], Awaitable[T]]) -> T:
        if not self.breaker.allow():
            raise StoreUnavailable("Redis is unreachable", self.breaker.retry_after())
        try:
            async with asyncio.timeout(self._deadline):  # no task per call, as wait_for makes
                result = await action()
        except FAILURES as exc:
            self.breaker.failure()
            self._on_error(op)
            raise StoreUnavailable(f"Redis {op} failed: {type(exc).__name__}",
                                   self.breaker.retry_after()) from exc
        self.breaker.success()
        return result

    async def ping(self) -> bool:
        try:
            return bool(await self._call("ping", self._client.ping))
        except StoreUnavailable:
            return False

    async def add_model(self, model_id: str, document: str) -> str | None:
        async def add() -> str | None:
            created = await self._client.hsetnx(self._models_key, model_id, document)
            if created:
                return None
            existing: Any = await self._client.hget(self._models_key, model_id)
            return str(existing) if existing is not None else None

        return await self._call("add_model", add)

    async def get_model(self, model_id: str) -> str | None:
        async def get() -> str | None:
            value: Any = await self._client.hget(self._models_key, model_id)
            return None if value is None else str(value)

        return await self._call("get_model", get)

    async def list_models(self) -> dict[str, str]:
        async def list_all() -> dict[str, str]:
            found: Any = await self._client.hgetall(self._models_key)
            return {str(k): str(v) for k, v in found.items()}

        return await self._call("list_models", list_all)

    async def cache_get(self, key: str) -> str | None:
        async def get() -> str | None:
            value: Any = await self._client.get(self._prefix + key)
            return None if value is None else str(value)

        return await self._call("cache_get", get)

    async def cache_set(self, key: str, value: str, ttl_s: int) -> None:
        async def put() -> None:
            await self._client.set(self._prefix + key, value, ex=ttl_s)

        await self._call("cache_set", put)

    async def close(self) -> None:
        await self._client.aclose()
