"""A short hash of the engine's code and data: cached answers of another version never match."""

from __future__ import annotations

import hashlib
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent


@cache
def engine_fingerprint() -> str:
    digest = hashlib.sha256()
    paths = sorted([*ROOT.joinpath("core").glob("*.py"), *ROOT.joinpath("data").rglob("*.json"),
                    ROOT / "answers.py"])
    for path in paths:
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]
