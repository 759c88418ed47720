"""A circuit breaker: after a failure, fail fast for a cool-down, then let one call try again."""

from __future__ import annotations

import time
from collections.abc import Callable


class CircuitBreaker:
    """Closed (calls go through) until a failure; then open for ``cooldown_s``.

    When the cool-down is over, the next call is let through as a trial and the breaker stays
    open for everyone else until that trial reports ``success()`` or ``failure()``. A dead
    dependency therefore costs one timeout per cool-down, not one per request.
    """

    def __init__(self, cooldown_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.cooldown_s = cooldown_s
        self._clock = clock
        self._open_until: float | None = None

    @property
    def is_open(self) -> bool:
        return self._open_until is not None

    def allow(self) -> bool:
        """May a call go to the dependency now?"""
        if self._open_until is None:
            return True
        now = self._clock()
        if now < self._open_until:
            return False
        self._open_until = now + self.cooldown_s  # this caller is the trial; others wait
        return True

    def success(self) -> None:
        self._open_until = None

    def failure(self) -> None:
        self._open_until = self._clock() + self.cooldown_s

    def retry_after(self) -> float:
        """Seconds until the dependency is tried again (0 when closed)."""
        if self._open_until is None:
            return 0.0
        return max(0.0, self._open_until - self._clock())
