"""A number token's value for the attribute it was bound to: what its suffix means there.

``k`` is 1024 for context lengths that are powers of two (32k = 32,768, 128k = 131,072; "1M
context" = 1,048,576) because that is what models and serving frameworks mean, and 1000 everywhere
else ("16k users", "100k vocab", "1T tokens", "2e12 tokens" are decimal). A percentage is a share
(40% -> 0.4); for an MFU or a memory share a number above 1 is read as a percentage.
"""

from __future__ import annotations

from service.parser.numbers import is_power_of_two
from service.parser.tokens import Token

_DECIMAL = {"k": 1e3, "m": 1e6, "b": 1e9, "t": 1e12}
_BINARY = {"k": 1024, "m": 1024 * 1024}
LENGTHS = ("seq_len", "_output", "_prompt")
SHARES = ("mfu", "memory_headroom")


def amount(token: Token, attribute: str) -> tuple[float, str]:
    """(value, how it was read when that was a choice, else "")."""
    value, unit = token.value, token.unit
    attribute = attribute.split("~")[0]
    if attribute in LENGTHS and unit in _BINARY:
        if is_power_of_two(abs(value)):
            tokens = value * _BINARY[unit]
            base = "k = 1024" if unit == "k" else "M = 1024 x 1024"
            return tokens, f"{token.text} = {tokens:,.0f} tokens ({base} for power-of-two context lengths)"
        return value * _DECIMAL[unit], f"{token.text} = {value * _DECIMAL[unit]:,.0f} tokens (decimal k)"
    if attribute in SHARES:
        return (value / 100 if unit == "%" or value > 1 else value), ""
    return value * _DECIMAL.get(unit, 1.0), ""


def as_field(value: float) -> int | float:
    """Whole numbers as ``int`` (the request's counts are integers); others stay ``float`` so the
    range check can say "must be a whole number"."""
    return int(value) if value == int(value) and abs(value) < 1e15 else value
