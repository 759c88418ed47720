"""Asking a chat question in a test: the same road as ``POST /v1/ask`` (estimates layer,
registry, caches) over an embedded store, run to completion."""

from __future__ import annotations

import asyncio
from typing import Any

from service.asking.ask_flow import Asker
from service.asking.ask_types import AskAnswer
from service.estimates import Estimates
from service.observability import Metrics
from service.registry import Registry
from service.store.memory import MemoryStore

BASE_URL = "http://fitcheck.test"


def local_asker() -> Asker:
    store = MemoryStore(max_entries=256)
    return Asker(Estimates(store, Registry(store), Metrics(), ttl_s=60), BASE_URL)


_ASKER = local_asker()


def ask(text: Any, previous: dict[str, Any] | None = None) -> AskAnswer:
    return asyncio.run(_ASKER.ask(text, previous))
