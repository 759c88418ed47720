"""A short hash of the engine's code and data: cached answers of another version never match."""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent


@cache
def engine_fingerprint() -> str:
    return fingerprint_of(ROOT)


def fingerprint_of(root: Path) -> str:
    """The hash of the engine's packages, its data, and the code that writes the cached JSON
    text, under ``root`` (the ``service`` package)."""
    digest = hashlib.sha256()
    paths = sorted([*root.joinpath("core").rglob("*.py"), *root.joinpath("data").rglob("*.json"),
                    root / "answers.py", root / "answer_json.py"])
    for path in paths:
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]
