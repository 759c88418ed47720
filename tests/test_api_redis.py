"""The service on a real Redis (127.0.0.1:6379, each test under its own key prefix), with Redis
down (a closed port), and with Redis dying between two requests (a redis-server of our own)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
import redis
from api_support import (
    REDIS_URL,
    TRAIN,
    OwnRedis,
    client,
    free_port,
    hung_server,
    prefix,
    redis_answers,
)
from fastapi.testclient import TestClient

SMALL = {"layers": 16, "hidden": 2048, "heads": 16, "kv_heads": 8, "ffn": 8192, "vocab": 128256}
needs_redis = pytest.mark.skipif(not redis_answers(), reason="no Redis on 127.0.0.1:6379 "
                                 "(.ci/run starts one)")


@pytest.fixture
def key_prefix() -> Iterator[str]:
    name = prefix()
    yield name
    if redis_answers():
        r = redis.Redis.from_url(REDIS_URL)
        keys = list(r.scan_iter(match=name + "*"))
        if keys:
            r.delete(*keys)
        r.close()


@needs_redis
def test_a_second_replica_sees_a_registered_model(key_prefix: str) -> None:
    settings = {"redis_url": REDIS_URL, "redis_prefix": key_prefix}
    with client(**settings) as first, client(**settings) as second:
        assert first.get("/readyz").json() == {"status": "ok", "redis": "up", "store": "redis"}
        r = first.post("/v1/models", json={"id": "shared-3b", "arch": SMALL})
        assert r.status_code == 201
        assert second.get("/v1/models/shared-3b").json()["params_total"] == r.json()[
            "params_total"]
        assert second.get("/v1/models").json()["registry"] == "up"
        est = second.post("/v1/estimate", json={"model": "shared-3b", "gpu": "l4-24gb"})
        assert est.status_code == 200 and est.json()["model"] == "shared-3b"
    raw = redis.Redis.from_url(REDIS_URL)
    assert raw.hexists(key_prefix + "models", "shared-3b")
    assert raw.ttl(key_prefix + "models") == -1  # registered models never expire
    raw.close()


@needs_redis
def test_estimates_are_cached_in_redis_for_every_replica(key_prefix: str) -> None:
    settings = {"redis_url": REDIS_URL, "redis_prefix": key_prefix}
    with client(**settings) as first, client(**settings) as second:
        a = first.post("/v1/estimate", json=TRAIN).json()
        b = second.post("/v1/estimate", json={**TRAIN, "model": "Llama 3 8B"}).json()
        assert a == b
        assert "fitcheck_cache_hits_total 1.0" in second.get("/metrics").text
    raw = redis.Redis.from_url(REDIS_URL)
    keys = list(raw.scan_iter(match=key_prefix + "est:*"))
    assert len(keys) == 1 and 0 < raw.ttl(keys[0]) <= 3600
    raw.close()


def redis_error_count(api: TestClient) -> float:
    text = api.get("/metrics").text
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith("fitcheck_redis_errors_total{"))


def test_redis_down_costs_one_attempt_per_cool_down() -> None:
    with client(redis_url=f"redis://127.0.0.1:{free_port()}/0", breaker_cooldown_s=5) as api:
        ready = api.get("/readyz")
        assert ready.status_code == 200
        assert ready.json() == {"status": "degraded", "redis": "down", "store": "redis"}
        before = redis_error_count(api)
        for _ in range(20):
            r = api.post("/v1/estimate", json={**TRAIN, "gpu_count": 8})
            assert r.status_code == 200 and r.json()["min_gpus"] == 8
        # the breaker answers while open: at most one real attempt (one timeout) per cool-down
        assert redis_error_count(api) - before <= 1
        down = api.post("/v1/models", json={"id": "team-x", "arch": SMALL})
        assert down.status_code == 503
        assert down.headers["content-type"] == "application/problem+json"
        assert int(down.headers["retry-after"]) >= 1 and "retry" in down.json()["detail"]
        unknown = api.post("/v1/estimate", json={"model": "team-x"})
        assert unknown.status_code == 503 and unknown.headers["retry-after"]
        assert api.get("/v1/models").json()["registry"] == "down"
        assert 'fitcheck_redis_errors_total{operation=' in api.get("/metrics").text


def test_a_hung_redis_is_bounded_by_the_timeout() -> None:
    with hung_server() as port, client(redis_url=f"redis://127.0.0.1:{port}/0",
                                       redis_timeout_s=0.1, breaker_cooldown_s=30) as api:
        for _ in range(11):
            assert api.post("/v1/estimate", json=TRAIN).status_code == 200
        # the first request timed out once; the open breaker answered the other ten
        assert redis_error_count(api) == 1
        assert api.get("/readyz").json()["redis"] == "down"


def test_redis_dying_between_two_requests() -> None:
    own = OwnRedis()
    try:
        with client(redis_url=own.url, breaker_cooldown_s=0.3) as api:
            assert api.post("/v1/models", json={"id": "kept-3b", "arch": SMALL}).status_code == 201
            before = api.post("/v1/estimate", json={"model": "kept-3b", "gpu": "l4-24gb"}).json()
            builtin = api.post("/v1/estimate", json=TRAIN).json()
            own.kill()
            assert api.post("/v1/estimate", json=TRAIN).json() == builtin
            assert redis_error_count(api) <= 1
            # the replica still knows the model it has seen; registering waits for Redis
            again = api.post("/v1/estimate", json={"model": "kept-3b", "gpu": "l4-24gb"})
            assert again.status_code == 200 and again.json() == before
            assert api.post("/v1/models", json={"id": "new-3b", "arch": SMALL}).status_code == 503
            assert api.get("/readyz").json()["redis"] == "down"
            assert api.get("/healthz").status_code == 200
    finally:
        own.kill()


def test_redis_coming_back_is_noticed() -> None:
    own = OwnRedis()
    try:
        with client(redis_url=own.url, breaker_cooldown_s=0.2) as api:
            own.kill()
            assert api.get("/readyz").json()["redis"] == "down"
            own = OwnRedis(port=own.port)
            time.sleep(0.25)  # the breaker's cool-down
            assert api.get("/readyz").json()["redis"] == "up"
            assert api.post("/v1/models", json={"id": "back-3b", "arch": SMALL}).status_code == 201
    finally:
        own.kill()
