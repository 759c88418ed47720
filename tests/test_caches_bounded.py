"""Every cache has a size limit: a long run of distinct questions must not grow memory without
end. Function caches are ``lru_cache`` with a ``maxsize`` (``functools.cache`` only on functions
without parameters: one entry), and the caches kept in dictionaries stop at their limits."""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path

import pytest

from service import estimates
from service.core.job.request import EstimateRequest
from service.core.job.resolve import resolve
from service.core.planning import layout_totals
from service.estimates import Estimates
from service.observability import Metrics
from service.registry import Registry
from service.store.memory import MemoryStore

ROOT = Path(__file__).resolve().parents[1]


def _unbounded(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    params = node.args.args + node.args.kwonlyargs + node.args.posonlyargs
    for deco in node.decorator_list:
        target = deco.func if isinstance(deco, ast.Call) else deco
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name == "cache" and params:
            return "functools.cache on a function with parameters"
        if name == "lru_cache":
            if not isinstance(deco, ast.Call):
                return None  # the default maxsize, 128
            for kw in deco.keywords:
                if kw.arg == "maxsize" and isinstance(kw.value, ast.Constant) \
                        and kw.value.value is None:
                    return "lru_cache(maxsize=None)"
    return None


def test_no_function_cache_is_unbounded() -> None:
    found = []
    for path in sorted((ROOT / "service").rglob("*.py")) + sorted((ROOT / "bot").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                why = _unbounded(node)
                if why:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}: {why}")
    assert not found, found


def test_layout_tables_keep_only_the_most_recent_jobs() -> None:
    layout_totals.clear_tables()
    for seq in range(1024, 1024 + layout_totals.TABLES + 3):
        layout_totals.totals_for(resolve(EstimateRequest(model="llama-3-8b", seq_len=seq)))
    assert len(layout_totals._tables) == layout_totals.TABLES
    layout_totals.clear_tables()


def test_ready_answers_keep_only_the_most_recent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(estimates, "HOT_ENTRIES", 3)
    store = MemoryStore(max_entries=4)
    est = Estimates(store, Registry(store), Metrics(), ttl_s=60)

    async def ask_many() -> None:
        for seq in range(1024, 1032):
            await est.answer_json({"model": "llama-3-8b", "seq_len": seq}, "http://t")

    asyncio.run(ask_many())
    assert len(est._hot) == 3
