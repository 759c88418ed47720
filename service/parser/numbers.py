"""Counts as people write them ("8", "eight", "a single", "a couple of") and number helpers.
Suffixes (4k, 1.5T, 80gb) are read by ``tokens``; what they mean for an attribute by ``amounts``.
"""

from __future__ import annotations

import re

WORDS: dict[str, int] = {
    "a": 1, "an": 1, "one": 1, "single": 1, "a single": 1, "two": 2, "a pair of": 2, "pair of": 2,
    "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
    "twelve": 12, "sixteen": 16, "a dozen": 12, "dozen": 12, "twenty": 20, "thirty-two": 32,
    "sixty-four": 64, "a couple of": 2, "couple of": 2, "a couple": 2, "half a dozen": 6, "dual": 2,
    "twin": 2, "quad": 4,
}
WORD = "|".join(sorted((re.escape(w) for w in WORDS), key=len, reverse=True))
COUNT = rf"(?:\d{{1,3}}(?:,\d{{3}})+|\d+|{WORD})"  # "16,384 H100s"


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


def is_power_of_two(value: float) -> bool:
    return value == int(value) and value > 0 and int(value) & (int(value) - 1) == 0
