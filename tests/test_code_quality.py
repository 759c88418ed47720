"""The code stays ruff- and mypy-clean: the test suite enforces what the style guide asks."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=600, check=False)


def test_ruff_clean() -> None:
    result = _run("ruff", "check", "service", "tests", "bench")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_clean() -> None:
    result = _run("mypy", "service")
    assert result.returncode == 0, result.stdout + result.stderr


def test_import_contracts_hold() -> None:
    """The layering in pyproject.toml ([tool.importlinter]): the core's layers, a pure core,
    a parser that only reads, renderers that only render, a bot that talks HTTP."""
    result = subprocess.run(["lint-imports", "--no-cache"], cwd=ROOT, capture_output=True,
                            text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def _module_graph() -> dict[str, set[str]]:
    graph = grimp.build_graph("service", "bot", cache_dir=None)
    return {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}


def test_no_import_cycles() -> None:
    """Strongly connected components of the module graph are single modules (Tarjan)."""
    graph = _module_graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    assert cycles == []


def _function_level_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for inner in ast.walk(node):
                if isinstance(inner, ast.Import | ast.ImportFrom):
                    found.append(f"{path.relative_to(ROOT)}:{inner.lineno}")
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            found.append(f"{path.relative_to(ROOT)}:{node.lineno} (TYPE_CHECKING)")
    return found


def test_no_imports_inside_functions_in_the_engine_and_the_answer_road() -> None:
    """No import hidden in a function (or behind TYPE_CHECKING) to dodge a cycle."""
    roots = ("service/core", "service/parser", "service/asking", "service/render",
             "service/answers.py", "service/estimates.py")
    files = [p for r in roots for p in ([ROOT / r] if r.endswith(".py")
                                        else sorted((ROOT / r).rglob("*.py")))]
    found = [hit for path in files for hit in _function_level_imports(path)]
    assert found == []


def test_module_names_are_unique() -> None:
    for package in ("service", "bot"):
        names = [p.stem for p in (ROOT / package).rglob("*.py") if p.stem != "__init__"]
        repeated = sorted({n for n in names if names.count(n) > 1})
        assert repeated == [], f"{package}: {repeated}"
