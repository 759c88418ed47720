"""The text being parsed, lowercased with its offsets kept, and the spans already read.

Extractors run in order (pasted arguments, architecture, models, hardware, knobs); each claims
the characters it read so later ones do not read them again (the "8b" of "llama 3 8b" is not a
bare size, the "80" of "a100 80gb" is not a count).
"""

from __future__ import annotations

import re
from itertools import islice

from service.parser.tokens import CLAIMED
from service.parser.types import Finding

_STALE = re.compile(r"(?:instead\s+of|rather\s+than|\bnot|no\s+longer|\bfrom)\s*(?:the\s+|a\s+|an\s+)?$")
_TO = re.compile(r"\s*(?:,\s*)?to\b")
MAX_MATCHES = 8  # per pattern: no question names more; long pastes stay fast
NEAR = 80  # characters around a trigger word that a pattern containing it can span


def _lower(text: str) -> str:
    """Lowercase without changing the length (a few characters lowercase to two)."""
    low = text.lower()
    if len(low) == len(text):
        return low
    return "".join(c.lower() if len(c.lower()) == 1 else c for c in text)


class Scan:
    """Lowercased text with claimed spans blanked out; collects findings."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.low = _lower(text)
        self._chars = list(self.low)
        self._view: str | None = self.low
        self.findings: list[Finding] = []
        self._windows: dict[tuple[str, ...], list[tuple[int, int]]] = {}
        self.notes: list[str] = []

    def view(self) -> str:
        """The text with every claimed span replaced by spaces (same offsets as ``low``)."""
        if self._view is None:
            self._view = "".join(self._chars)
        return self._view

    def marked(self) -> str:
        """The text with every claimed character (but spaces) as ``CLAIMED``: the tokenizer's input."""
        return "".join(c if c == orig else CLAIMED for c, orig in zip(self._chars, self.low, strict=True))

    def claim(self, start: int, end: int) -> None:
        for i in range(max(0, start), min(end, len(self._chars))):
            self._chars[i] = " "
        self._view = None

    def add(self, field: str, value: object, start: int = 0, end: int = 0, note: str = "",
            claim: bool = True) -> None:
        self.findings.append(Finding(field, value, start, end, note))
        if claim and end > start:
            self.claim(start, end)

    def finditer(self, pattern: re.Pattern[str], limit: int = MAX_MATCHES,
                 near: tuple[str, ...] = ()) -> list[re.Match[str]]:
        """Up to ``limit`` matches on the view as it is now (claims made while the caller goes
        through them do not hide later ones: callers check ``free`` when that matters). With
        ``near``, only around those words: a pattern whose every match contains one of them
        need not scan a long paste end to end."""
        view = self.view()
        if not near:
            return list(islice(pattern.finditer(view), limit))
        spans = self.windows(near)
        if not spans:
            return []
        found = (m for start, end in spans for m in pattern.finditer(view, start, end))
        return list(islice(found, limit))

    def windows(self, words: tuple[str, ...]) -> list[tuple[int, int]]:
        """Merged spans of ``NEAR`` characters around each occurrence of ``words`` in the text."""
        cached = self._windows.get(words)
        if cached is not None:
            return cached
        spans: list[tuple[int, int]] = []
        for word in words:
            at = self.low.find(word)
            while at >= 0:
                spans.append((max(0, at - NEAR), min(len(self.low), at + len(word) + NEAR)))
                at = self.low.find(word, at + 1)
        merged: list[tuple[int, int]] = []
        for start, end in sorted(spans):
            if merged and start <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], end))
            else:
                merged.append((start, end))
        self._windows[words] = merged
        return merged

    def free(self, start: int, end: int) -> bool:
        """True when no character of the span (without its edge whitespace) was claimed yet."""
        chars, low = self._chars, self.low
        end = min(end, len(chars))
        while start < end and chars[start].isspace():
            start += 1
        while end > start and chars[end - 1].isspace():
            end -= 1
        return all(chars[i] == low[i] for i in range(start, end))

    def stale(self, start: int, end: int | None = None) -> bool:
        """True when the words before ``start`` retire what follows ("instead of 16", "from 8");
        with ``end`` (a model's span), "from X" retires X only before a "to" ("switching from
        llama to qwen"): else X is the base a job starts from ("a reward model from llama")."""
        found = _STALE.search(self.low[max(0, start - 16):start])
        if found is None:
            return False
        if end is not None and found.group(0).lstrip().startswith("from"):
            return _TO.match(self.low, end) is not None
        return True

    def values(self, field: str) -> list[object]:
        return [f.value for f in self.findings if f.field == field]
