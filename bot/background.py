"""The work a listener does after its ack: tasks kept referenced until they finish (asyncio
only keeps weak references), errors logged, and ``drain`` to wait for them on shutdown."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

log = logging.getLogger("fitcheck_bot")


class Background:
    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[None]] = set()
        self.spawned = 0  # work started since the process began (for /healthz and tests)

    def spawn(self, work: Coroutine[Any, Any, None], name: str) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(self._guard(work, name), name=name)
        self._tasks.add(task)
        self.spawned += 1
        task.add_done_callback(self._tasks.discard)
        return task

    @staticmethod
    async def _guard(work: Coroutine[Any, Any, None], name: str) -> None:
        try:
            await work
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("background work failed: %s", name)

    @property
    def pending(self) -> int:
        return len(self._tasks)

    async def drain(self, timeout_s: float = 10.0) -> None:
        """Wait for the work in flight (and work it starts), at most ``timeout_s``."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while self._tasks and loop.time() < deadline:
            await asyncio.wait(set(self._tasks), timeout=max(0.0, deadline - loop.time()))
