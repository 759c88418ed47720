"""Numbers as people write them: 4k, 32K, 1.5T, 3e12, 1,000,000, "one", "a dozen".

Two readings of ``k``: context lengths that are powers of two use 1024 (4k = 4,096,
32k = 32,768, 128k = 131,072; "1M context" = 1,048,576) because that is what the models and
frameworks mean; every other count (tokens, vocabularies, "100k context") is decimal.
"""

from __future__ import annotations

import re

NUM = r"\d{1,15}(?:,\d{3}){0,5}(?:\.\d{1,12})?(?:e[+-]?\d{1,3})?"
SCALE = r"(?:k|m|b|bn|t|thousand|million|billion|trillion)"

_DECIMAL = {"k": 1e3, "thousand": 1e3, "m": 1e6, "million": 1e6, "b": 1e9, "bn": 1e9,
            "billion": 1e9, "t": 1e12, "trillion": 1e12}
WORDS: dict[str, int] = {
    "a": 1, "an": 1, "one": 1, "single": 1, "a single": 1, "two": 2, "a pair of": 2, "pair of": 2,
    "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
    "twelve": 12, "sixteen": 16, "a dozen": 12, "dozen": 12, "twenty": 20, "thirty-two": 32,
    "sixty-four": 64, "a couple of": 2, "couple of": 2, "a couple": 2, "half a dozen": 6,
}
WORD = "|".join(sorted((re.escape(w) for w in WORDS), key=len, reverse=True))
COUNT = rf"(?:\d+|{WORD})"


def to_float(text: str) -> float | None:
    """'4,096' -> 4096.0, '3e12' -> 3e12; None when it is not a number."""
    try:
        value = float(text.replace(",", ""))
    except ValueError:
        return None
    return value if value == value and abs(value) != float("inf") else None


def count(text: str) -> int | None:
    """'8' or 'eight' or 'a single' -> 8 / 8 / 1; None for anything else (or too big)."""
    t = text.strip().lower()
    if t in WORDS:
        return WORDS[t]
    value = to_float(t)
    if value is None or value != int(value) or value > 1e9:
        return None
    return int(value)


def scaled(number: str, suffix: str | None) -> float | None:
    """Decimal scaling: ('1.5', 't') -> 1.5e12, ('300', 'billion') -> 3e11."""
    value = to_float(number)
    if value is None:
        return None
    if suffix:
        value *= _DECIMAL.get(suffix.lower(), 1.0)
    return value


def is_power_of_two(value: float) -> bool:
    return value == int(value) and value > 0 and int(value) & (int(value) - 1) == 0


def context_length(number: str, suffix: str | None) -> tuple[int, str] | None:
    """A context length and, when ``k``/``M`` was read, how: ('16', 'k') -> (16384, '16k = 16,384')."""
    value = to_float(number)
    if value is None:
        return None
    unit = (suffix or "").lower()
    if unit in ("k", "m"):
        binary = is_power_of_two(value)
        base = (1024 if unit == "k" else 1024 * 1024) if binary else (1e3 if unit == "k" else 1e6)
        tokens = round(value * base)
        how = "k = 1024 for power-of-two context lengths" if binary else "decimal k"
        return tokens, f"{number}{unit} = {tokens:,} tokens ({how})"
    if value != int(value):
        return None
    return int(value), ""


def decimal_count(number: str, suffix: str | None) -> int | None:
    """Vocabulary sizes and other counts with k = 1000: ('100', 'k') -> 100000."""
    value = scaled(number, suffix)
    if value is None or value != int(value) or value > 1e12:
        return None
    return int(value)


def percent(number: str, has_percent: bool) -> float | None:
    """'40' with % or '0.4' -> 0.4."""
    value = to_float(number)
    if value is None:
        return None
    return value / 100 if has_percent or value > 1 else value
