"""A deadline: "in 7 days", "within two weeks", "in under a month", "by 36 hours". The chat
answers it with the GPU count that finishes the stated training tokens in time
(``asking/deadline_fit.py``); "for 3 days" or "how many days" are not deadlines, unless the
hardware is had for that long ("we have one p5 for 2 weeks, can we ...?")."""

from __future__ import annotations

import re

from service.parser.numbers import WORD, count
from service.parser.scan import Scan

_DEADLINE = re.compile(
    r"\b(?:in|within|under|inside|by|in\s+under|in\s+less\s+than|less\s+than|at\s+most"
    r"|no\s+more\s+than|max(?:imum)?\s+of)\s+"
    rf"(?:(?P<n>\d+(?:\.\d+)?)|(?P<word>{WORD}))\s*(?P<unit>hours?|hrs?|days?|weeks?|wks?|months?)\b")
# hardware had for a while: "we have one p5.48xlarge for 2 weeks", "reserved 64 h100s for 10 days"
_HELD_FOR = re.compile(
    r"\b(?:have|has|got|rent\w*|reserved?|booked?|access\s+to|allocated?)\b(?:[^.?!]|\.(?=\w)){0,60}?"
    r"(?P<held>\bfor\s+(?:the\s+next\s+|another\s+|just\s+|only\s+)?"
    rf"(?:(?P<n>\d+(?:\.\d+)?)|(?P<word>{WORD}|a|an|one))\s*(?P<unit>hours?|hrs?|days?|weeks?|wks?|months?)\b)")
# what the hardware had for a while must be: GPUs, a node or an instance ("has been running for 2
# days" is a run's age, not a deadline)
_HARDWARE = re.compile(r"\b(?:gpus?|cards?|nodes?|box(?:es)?|instances?|machines?|servers?|dgx|"
                       r"[abhl]\d{2,3}s?|mi\d{3}x?|p[45]\w*\.\d*x?large|[a-z]\d[\w-]*-\d+g)\b")
_RUN_AGE = re.compile(r"\b(?:running|run|trained|training|been)\b")
HOURS = {"h": 1, "d": 24, "w": 24 * 7, "m": 24 * 30}  # a month read as 30 days


def deadline_hours(text: str) -> float | None:
    m = _DEADLINE.search(text)
    return _hours(m) if m is not None else None


def _hours(m: re.Match[str]) -> float | None:
    word = m.group("word")
    amount = float(m.group("n")) if m.group("n") else 1 if word in ("a", "an") else count(word) or 0
    return float(amount * HOURS[m.group("unit")[0]]) if amount > 0 else None


def find_deadline(scan: Scan) -> None:
    """Add a ``_deadline_hours`` finding (claiming the words: no other field takes them)."""
    for pattern in (_DEADLINE, _HELD_FOR):
        for m in scan.finditer(pattern, limit=1):
            hours = _hours(m)
            gap = scan.low[m.start():m.start("held")] if pattern is _HELD_FOR else ""
            if pattern is _HELD_FOR and (not _HARDWARE.search(gap) or _RUN_AGE.search(gap)):
                continue
            if hours is not None:
                # the hardware before "for" is left to the GPU and instance readers
                start = m.start("held") if pattern is _HELD_FOR else m.start()
                scan.add("_deadline_hours", hours, start, m.end())
                return
