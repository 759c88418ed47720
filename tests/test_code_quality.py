"""The code stays ruff- and mypy-clean: the test suite enforces what the style guide asks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

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
