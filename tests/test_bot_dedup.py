"""Event ids and followed threads: claimed once (Redis ``SET NX`` with a TTL, shared by
replicas), in memory without Redis, and still in memory when Redis is down."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

import pytest
import redis
from api_support import REDIS_URL, free_port, redis_answers

from bot.dedup import MemorySeen, RedisSeen, open_store

needs_redis = pytest.mark.skipif(not redis_answers(), reason="no Redis on 127.0.0.1:6379")


@pytest.fixture
def key_prefix() -> Iterator[str]:
    prefix = f"fitcheck-bot-test-{uuid.uuid4().hex[:12]}:"
    yield prefix
    if redis_answers():
        raw = redis.Redis.from_url(REDIS_URL)
        for key in raw.scan_iter(prefix + "*"):
            raw.delete(key)


def test_memory_claims_once_until_the_ttl_ends() -> None:
    async def scenario() -> None:
        seen = MemorySeen(max_entries=3)
        assert await seen.claim("event:E1", 60) and not await seen.claim("event:E1", 60)
        assert await seen.exists("event:E1") and not await seen.exists("event:E2")
        assert await seen.claim("event:E0", 0)  # a TTL of 0 is gone at once
        assert await seen.claim("event:E0", 60)
        for n in range(5):  # bounded: the oldest go first
            await seen.claim(f"event:X{n}", 60)
        assert not await seen.exists("event:E1")
        assert open_store(None, "p:").kind == "memory"

    asyncio.run(scenario())


@needs_redis
def test_redis_claims_once_across_replicas_with_a_ttl(key_prefix: str) -> None:
    async def scenario() -> None:
        one, two = RedisSeen(REDIS_URL, key_prefix), RedisSeen(REDIS_URL, key_prefix)
        assert await one.claim("event:E1", 120)
        assert not await two.claim("event:E1", 120)  # another replica sees it
        assert await two.exists("event:E1")
        await one.close()
        await two.close()

    asyncio.run(scenario())
    ttl = redis.Redis.from_url(REDIS_URL).ttl(key_prefix + "event:E1")
    assert 0 < ttl <= 120


def test_a_dead_redis_falls_back_to_memory() -> None:
    async def scenario() -> None:
        seen = RedisSeen(f"redis://127.0.0.1:{free_port()}/0", "p:")
        assert await seen.claim("event:E1", 60)
        assert not await seen.claim("event:E1", 60)  # remembered in memory meanwhile
        assert await seen.exists("event:E1")
        await seen.close()

    asyncio.run(scenario())
