"""The bot's code: ruff- and mypy-strict-clean, small files, and a client of the service over
HTTP only (it imports nothing from ``service``)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BOT = ROOT / "bot"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=600, check=False)


def test_ruff_clean() -> None:
    tests = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").glob("*bot*.py"))
    result = _run("ruff", "check", "bot", *tests)
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_strict_clean() -> None:
    result = _run("mypy", "--strict", "bot")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_bot_never_imports_the_service() -> None:
    for path in BOT.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for name in names:
                assert name != "service" and not name.startswith("service."), f"{path}: {name}"


def test_files_stay_small() -> None:
    for path in BOT.rglob("*.py"):
        assert len(path.read_text().splitlines()) <= 300, path
