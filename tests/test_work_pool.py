"""The planner runs in a pool of worker processes behind a bounded queue: probes never wait
behind it, a full queue is a 503 with Retry-After, a dead worker is replaced, and the engine's
errors come back from the workers as the usual problems. No test reads a clock: jobs block on
a file until the test releases them."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from service.work_pool import PoolBusy, WorkPool, cpu_count
from tests.api_support import TRAIN, client

PROBLEM = "application/problem+json"


def wait_for(path: str) -> int:
    """A worker's job that lasts until ``path`` exists (then answers its process id)."""
    while not os.path.exists(path):
        time.sleep(0.01)
    return os.getpid()


@pytest.fixture
def api() -> Iterator[TestClient]:
    with client(workers=1, work_queue=1) as c:
        yield c


def _pool(api: TestClient) -> WorkPool:
    pool = api.app.state.services.pool  # type: ignore[attr-defined]
    assert isinstance(pool, WorkPool)
    return pool


def _assert_busy(response: object) -> None:
    assert response.status_code == 503, response.text  # type: ignore[attr-defined]
    assert response.headers["content-type"] == PROBLEM  # type: ignore[attr-defined]
    assert int(response.headers["retry-after"]) >= 1  # type: ignore[attr-defined]
    body = response.json()  # type: ignore[attr-defined]
    assert body["type"].endswith("/planner-busy") and body["retry_after_s"] >= 1


def test_probes_answer_while_every_worker_is_busy(api: TestClient, tmp_path: Path) -> None:
    pool = _pool(api)
    release = tmp_path / "release"
    jobs = [api.portal.start_task_soon(pool.run, wait_for, str(release))  # type: ignore[union-attr]
            for _ in range(pool.capacity)]
    while pool.in_flight < pool.capacity:
        time.sleep(0.01)
    for path in ("/healthz", "/readyz", "/metrics"):
        assert api.get(path).status_code == 200, path
    assert api.post("/v1/estimate", json={"model": "llama-3-8b"}).status_code == 200  # no planner
    _assert_busy(api.post("/v1/estimate", json=TRAIN))
    page = api.get("/v1/estimate?model=llama-3-8b&gpu=a100-40gb",
                   headers={"Accept": "text/html"})
    assert page.status_code == 503 and int(page.headers["retry-after"]) >= 1
    assert "planner is busy" in page.text  # the form again, with the notice
    _assert_busy(api.get("/v1/estimate?model=llama-3-8b&gpu=a100-40gb"))  # JSON: a problem
    _assert_busy(api.post("/v1/ask", json={"text": "llama 3 8b on 8 a100 40gb, zero 3",
                                           "previous": None}))
    assert not any(job.done() for job in jobs)  # the probes did not wait for them
    release.touch()
    assert {job.result() for job in jobs} != {os.getpid()}  # they ran in another process
    assert api.post("/v1/estimate", json=TRAIN).status_code == 200


def test_a_dead_worker_is_replaced(api: TestClient, tmp_path: Path) -> None:
    pool = _pool(api)
    release = tmp_path / "release"
    release.touch()
    worker = api.portal.call(pool.run, wait_for, str(release))
    os.kill(worker, signal.SIGKILL)
    statuses = []
    for _ in range(50):
        response = api.post("/v1/estimate", json={**TRAIN, "seq_len": 2048 + len(statuses)})
        statuses.append(response.status_code)
        if response.status_code == 200:
            break
        _assert_busy(response)
    assert statuses[-1] == 200


def test_engine_errors_come_back_from_the_workers(api: TestClient) -> None:
    response = api.post("/v1/estimate", json={"model": "gpt2", "seq_len": 4096,
                                              "gpu": "a100-40gb"})
    assert response.status_code == 422
    assert response.json()["errors"][0]["field"] == "seq_len"
    response = api.post("/v1/estimate", json={"model": "llama-3-8b", "tp": 3, "gpu_count": 3,
                                              "gpu": "h100-80gb"})
    assert response.status_code == 422 and response.json()["errors"][0]["field"] == "tp"


def test_a_full_queue_refuses_at_once(tmp_path: Path) -> None:
    release = tmp_path / "release"

    async def scenario() -> int:
        pool = WorkPool(workers=1, queue=0, kind="thread")
        try:
            first = asyncio.ensure_future(pool.run(wait_for, str(release)))
            await asyncio.sleep(0)
            with pytest.raises(PoolBusy) as busy:
                await pool.run(wait_for, str(release))
            assert busy.value.retry_after_s >= 1
            release.touch()
            return await first
        finally:
            pool.close()

    assert asyncio.run(scenario()) == os.getpid()  # a thread pool: the same process


def test_the_pool_is_sized_to_the_cpus_a_container_may_use(tmp_path: Path) -> None:
    cpu_max = tmp_path / "cpu.max"
    host = cpu_count(tmp_path / "absent")
    cpu_max.write_text("max 100000\n")
    assert cpu_count(cpu_max) == host
    cpu_max.write_text("150000 100000\n")
    assert cpu_count(cpu_max) == min(host, 2)
    cpu_max.write_text("10000 100000\n")
    assert cpu_count(cpu_max) == 1


def test_an_answer_from_a_worker_is_the_answer_computed_in_place(api: TestClient) -> None:
    """Workers send back the answer's JSON text, not its objects: the body, the report page's
    data and the cached copy are still the engine's answer, with the permalink put in."""
    from service.answer_json import answer_dict
    from service.answers import compute_answer
    from service.core.job.request import EstimateRequest

    job = {**TRAIN, "gpu": "a100-40gb", "seq_len": 3072}
    body = api.post("/v1/estimate", json=job).json()
    again = api.post("/v1/estimate", json={**job, "model": "Llama 3 8B"}).json()  # the cache
    expected = answer_dict(compute_answer(EstimateRequest(**job)).answer)
    for answer in (body, again):
        link = answer.pop("link")
        assert link.startswith("http") and "seq_len=3072" in link and "gpu=a100-40gb" in link
        assert answer == {k: v for k, v in expected.items() if k != "link"}
