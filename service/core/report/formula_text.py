"""A formula with its numbers put in: rendered from the very terms that computed its bytes."""

from __future__ import annotations

import re
from collections.abc import Mapping

from service.core.memory.formula import Number

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FUNCTIONS = frozenset({"max", "min", "ceil"})


def number_text(value: Number) -> str:
    """8030261248 -> '8,030,261,248'; 4.127 -> '4.127'; 0.05 -> '0.05'; 2.0 -> '2'."""
    if isinstance(value, int) or (float(value).is_integer() and abs(value) >= 1):
        return f"{round(value):,}"
    text = f"{value:.6g}"
    return text if "e" in text else text.rstrip("0").rstrip(".") if "." in text else text


def with_values(expression: str, terms: Mapping[str, Number]) -> str:
    """'params * bytes_per_param / shards' -> '8,030,261,248 * 2 / 16'."""
    def put(match: re.Match[str]) -> str:
        name = match.group(0)
        if name in _FUNCTIONS or name not in terms:
            return name
        return number_text(terms[name])

    return _NAME.sub(put, expression)
