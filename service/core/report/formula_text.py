"""A formula with its numbers put in: rendered from the very terms that computed its bytes."""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache

from service.core.memory.formula import Number

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FUNCTIONS = frozenset({"max", "min", "ceil"})


def number_text(value: Number) -> str:
    """8030261248 -> '8,030,261,248'; 4.127 -> '4.127'; 0.05 -> '0.05'; 2.0 -> '2'."""
    if isinstance(value, int) or (float(value).is_integer() and abs(value) >= 1):
        return f"{round(value):,}"
    text = f"{value:.6g}"
    return text if "e" in text else text.rstrip("0").rstrip(".") if "." in text else text


@lru_cache(maxsize=512)
def _pieces(expression: str) -> tuple[tuple[str, str], ...]:
    """The expression cut once into (text before a name, the name) pairs; the last name is ""."""
    pieces: list[tuple[str, str]] = []
    start = 0
    for match in _NAME.finditer(expression):
        pieces.append((expression[start:match.start()], match.group(0)))
        start = match.end()
    pieces.append((expression[start:], ""))
    return tuple(pieces)


def with_values(expression: str, terms: Mapping[str, Number]) -> str:
    """'params * bytes_per_param / shards' -> '8,030,261,248 * 2 / 16'."""
    out: list[str] = []
    for text, name in _pieces(expression):
        out.append(text)
        if name:
            known = name not in _FUNCTIONS and name in terms
            out.append(number_text(terms[name]) if known else name)
    return "".join(out)


@lru_cache(maxsize=4096)
def component_values(expression: str, terms: tuple[tuple[str, Number], ...]) -> str:
    """``with_values`` of a component's expression and terms: the model states' components
    are the same for every question about one model and layout, and so is their text."""
    return with_values(expression, dict(terms))
