"""Load and faults against the real thing: uvicorn serving the app (a subprocess, like one
replica) with a redis-server of this test's own (append-only file on, in a temporary
directory), loopback only, every run bounded in requests and seconds.

1. N requests at concurrency C (estimates hit and miss, registered models, reads): no errors.
2. Redis killed in the middle of a run: no 5xx; built-in estimates keep answering 200.
3. Redis restarted on the same data: every registered model is still there, for the replica
   that saw them and for a fresh one.

Run with ``-s`` to see the figures (requests, errors, throughput, p50/p99)."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from api_support import OwnRedis

from bench.service_throughput import (
    LoadResult,
    Request,
    run_load,
    uvicorn_server,
)

pytestmark = pytest.mark.skipif(shutil.which("redis-server") is None,
                                reason="redis-server is not installed (.ci/run installs it)")

MODELS = 24
N = 1500
C = 16
MAX_S = 60.0  # a bound per run, never an assertion
SMALL = {"layers": 16, "hidden": 2048, "heads": 16, "kv_heads": 8, "ffn": 8192, "vocab": 32000}
BUILTIN = ("llama-3-8b", "qwen2.5-7b", "mistral-7b", "llama-3.1-70b")


@pytest.fixture
def redis_dir(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path


def _figures(name: str, result: LoadResult) -> str:
    statuses = ", ".join(f"{s}: {n}" for s, n in sorted(result.statuses.items()))
    return (f"{name:<34} {result.completed:>5} answered, {result.transport_errors} transport "
            f"errors, {result.rps:>6.0f} req/s, p50 {result.percentile_ms(0.5):6.2f} ms, "
            f"p99 {result.percentile_ms(0.99):6.2f} ms  [{statuses}]")


def _model_id(i: int) -> str:
    return f"load-model-{i:02d}"


def _register(i: int) -> Request:
    return ("POST", "/v1/models", {"id": _model_id(i), "arch": {**SMALL, "layers": 8 + i}})


def _mixed(i: int) -> Request:
    """Built-in estimates (a few repeating: hits; the rest new: misses), registered models'
    estimates, model lookups, readiness."""
    kind = i % 10
    if kind < 4:
        return ("POST", "/v1/estimate", {"model": BUILTIN[i % 4], "seq_len": 2048, "zero_stage": 3})
    if kind < 6:
        return ("POST", "/v1/estimate", {"model": BUILTIN[i % 4], "seq_len": 1000 + i})
    if kind < 8:
        return ("POST", "/v1/estimate", {"model": _model_id(i % MODELS), "seq_len": 4096})
    if kind < 9:
        return ("GET", f"/v1/models/{_model_id(i % MODELS)}", None)
    return ("GET", "/readyz", None)


def _builtin(i: int) -> Request:
    return ("POST", "/v1/estimate", {"model": BUILTIN[i % 4], "seq_len": 512 + i % 64,
                                     "micro_batch": 1 + i % 3})


def _settings(redis: OwnRedis) -> dict[str, str]:
    return {"FITCHECK_REDIS_URL": redis.url, "FITCHECK_REDIS_PREFIX": "fitcheck-load:",
            "FITCHECK_BREAKER_COOLDOWN_S": "0.5", "FITCHECK_REDIS_TIMEOUT_S": "0.2"}


def _listed(port: int) -> set[str]:
    result = run_load(port, lambda i: ("GET", "/v1/models", None), 1, 1, keep_bodies=True)
    assert result.statuses == {200: 1}
    return {m["id"] for m in json.loads(result.bodies[0])["models"]}


def _readiness(port: int) -> dict[str, str]:
    result = run_load(port, lambda i: ("GET", "/readyz", None), 1, 1, keep_bodies=True)
    answer: dict[str, str] = json.loads(result.bodies[0])
    return answer


def _redis_errors(port: int) -> float:
    result = run_load(port, lambda i: ("GET", "/metrics", None), 1, 1, keep_bodies=True)
    return sum(float(line.rsplit(" ", 1)[1]) for line in result.bodies[0].decode().splitlines()
               if line.startswith("fitcheck_redis_errors_total{"))


def test_load_then_redis_dies_then_comes_back(redis_dir: Path) -> None:
    report: list[str] = [f"load and faults: N={N}, C={C}, {MODELS} registered models"]
    redis = OwnRedis(directory=redis_dir)
    try:
        with uvicorn_server(_settings(redis)) as port:
            registered = run_load(port, _register, MODELS, 4)
            assert registered.statuses == {201: MODELS}, registered.statuses
            wanted = {_model_id(i) for i in range(MODELS)}
            assert wanted <= _listed(port)

            # 1. N requests at concurrency C, Redis up: no errors at all
            steady = run_load(port, _mixed, N, C, MAX_S)
            report.append(_figures("1. Redis up, mixed", steady))
            assert steady.completed == N and steady.errors == 0, steady.statuses

            # 2. Redis killed a third of the way through a run of built-in estimates
            def killing(i: int) -> Request:
                if i == N // 3:
                    redis.kill()
                return _builtin(i)

            outage = run_load(port, killing, N, C, MAX_S)
            report.append(_figures("2. Redis killed at 1/3, built-in", outage))
            assert redis.process.poll() is not None
            assert outage.server_errors == 0 and outage.transport_errors == 0
            assert outage.statuses == {200: N}, outage.statuses
            assert _readiness(port) == {"status": "degraded", "redis": "down",
                                        "store": "redis"}
            assert _redis_errors(port) > 0  # the replica did see Redis fail mid-run
            down = run_load(port, lambda i: _register(100 + i), 5, 1)
            assert down.statuses == {503: 5}  # writes wait for Redis, with Retry-After
            seen = run_load(port, lambda i: _mixed(6 + 10 * i), 50, 4)  # registered, seen
            report.append(_figures("   Redis down, registered models", seen))
            assert seen.server_errors == 0 and seen.statuses == {200: 50}

            # 3. Redis back on the same append-only file: every registered model is there
            redis = OwnRedis(port=redis.port, directory=redis_dir)
            time.sleep(0.6)  # the circuit breaker's cool-down
            assert _readiness(port)["redis"] == "up"
            assert wanted <= _listed(port)
            back = run_load(port, _mixed, N // 3, C, MAX_S)
            report.append(_figures("3. Redis back, mixed", back))
            assert back.errors == 0, back.statuses
        # ... and for a fresh replica, which has seen none of them
        with uvicorn_server(_settings(redis)) as fresh:
            assert wanted <= _listed(fresh)
            estimates = run_load(fresh, lambda i: _mixed(6 + 10 * i), MODELS, 4,
                                 keep_bodies=True)
            assert estimates.statuses == {200: MODELS}
            report.append(f"   a fresh replica lists all {MODELS} registered models")
    finally:
        redis.kill()
    print("\n" + "\n".join(report))
