"""Heavy work off the event loop: a pool of worker processes sized to the CPU, behind a bounded
queue.

The planner and the fits-on search are pure Python and take milliseconds to a few hundred
milliseconds. On the event loop they would hold up every other request, ``/healthz`` included;
in threads they would still hold the GIL the loop needs. Worker processes run on the other
cores, at a lower priority than the server process (``WORKER_NICE``), so the loop answers
probes at once (``bench/service_cpu.py`` measures ``/healthz`` while report pages render).

At most ``workers + queue`` jobs are in flight; one more is refused at once (``PoolBusy``: the
API answers 503 with ``Retry-After``) instead of waiting in an unbounded queue. A worker that
dies (killed, out of memory) breaks the pool: the jobs in flight are refused the same way and
the next job starts a new pool.
"""

from __future__ import annotations

import asyncio
import math
import multiprocessing
import os
import time
from collections.abc import Callable
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any, TypeVar

from service.settings import Settings

T = TypeVar("T")
WORKER_NICE = 5  # workers yield the CPU to the server process's event loop
PRELOAD = ["service.pool_tasks"]  # imported once by the fork server, inherited by workers
LATENCY_WEIGHT = 0.2  # weight of the newest job in the running mean of job latencies


class PoolBusy(Exception):
    """No room in the pool's queue (or its workers died); ``retry_after_s``: when to ask
    again."""

    def __init__(self, reason: str, retry_after_s: int) -> None:
        super().__init__(f"{reason}; retry in {retry_after_s} s")
        self.reason = reason
        self.retry_after_s = retry_after_s


def cpu_count(cpu_max: Path = Path("/sys/fs/cgroup/cpu.max")) -> int:
    """CPUs this process may use: its CPU set, and a container's CPU limit (cgroup v2
    ``cpu.max``, "quota period") when one is set."""
    count = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") \
        else os.cpu_count() or 1
    try:
        quota, period = cpu_max.read_text().split()[:2]
    except (OSError, ValueError):
        return count
    if quota == "max":
        return count
    return max(1, min(count, math.ceil(int(quota) / int(period))))


def _lower_priority() -> None:
    os.nice(WORKER_NICE)


class WorkPool:
    """Runs functions in worker processes (or threads, ``kind="thread"``) from the event loop."""

    def __init__(self, workers: int, queue: int, kind: str = "process") -> None:
        self.workers = max(1, workers)
        self.capacity = self.workers + max(0, queue)
        self.kind = kind
        self.in_flight = 0
        self.mean_latency_s = 0.05  # submit to result, queueing included
        self._executor: Executor | None = None

    def _start(self) -> Executor:
        if self.kind == "thread":
            return ThreadPoolExecutor(self.workers, thread_name_prefix="fitcheck-work")
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(PRELOAD)
        return ProcessPoolExecutor(self.workers, mp_context=context, initializer=_lower_priority)

    def start(self) -> None:
        """Start the workers now (the first question would wait for them otherwise)."""
        if self._executor is None:
            self._executor = self._start()
            for _ in range(self.workers):
                self._executor.submit(os.getpid)

    def retry_after_s(self) -> int:
        """About the time a job takes to come back now (queueing included), 1 s at least."""
        return max(1, math.ceil(self.mean_latency_s))

    async def run(self, function: Callable[..., T], *args: Any) -> T:
        """``function(*args)`` in a worker; ``PoolBusy`` at once when the queue is full."""
        if self.in_flight >= self.capacity:
            raise PoolBusy(f"{self.in_flight} questions are being worked on",
                           self.retry_after_s())
        self.start()
        assert self._executor is not None
        executor = self._executor
        self.in_flight += 1
        start = time.perf_counter()
        try:
            return await asyncio.wrap_future(executor.submit(function, *args))
        except BrokenProcessPool:
            if self._executor is executor:
                self._executor = None
                executor.shutdown(wait=False, cancel_futures=True)
            raise PoolBusy("a worker process stopped; a new one is starting", 1) from None
        finally:
            self.in_flight -= 1
            elapsed = time.perf_counter() - start
            self.mean_latency_s += LATENCY_WEIGHT * (elapsed - self.mean_latency_s)

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None


def work_pool(settings: Settings) -> WorkPool | None:
    """The pool the settings ask for: one worker per CPU unless stated; none with 0 workers."""
    workers = cpu_count() if settings.workers is None else settings.workers
    if workers == 0:
        return None
    return WorkPool(workers, settings.work_queue, settings.worker_kind)
