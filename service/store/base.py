"""The store interface: registered models (kept forever) and cached estimates (with a TTL)."""

from __future__ import annotations

from typing import Protocol


class StoreUnavailable(RuntimeError):
    """The store cannot be reached now; ``retry_after`` says when it will be tried again."""

    def __init__(self, message: str, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Store(Protocol):
    """Async key-value operations the service needs; every method may raise StoreUnavailable."""

    kind: str  # "redis" or "embedded"

    async def ping(self) -> bool:
        """True when the store answers now (never raises)."""
        ...

    async def add_model(self, model_id: str, document: str) -> str | None:
        """Store a model unless the id exists; returns the existing document, else None."""
        ...

    async def get_model(self, model_id: str) -> str | None: ...

    async def list_models(self) -> dict[str, str]: ...

    async def cache_get(self, key: str) -> str | None: ...

    async def cache_set(self, key: str, value: str, ttl_s: int) -> None: ...

    async def close(self) -> None: ...
