"""Messages that are not a question fitcheck can answer: empty, emoji only, too long, a pasted
stack trace or log. (Injection attempts need no special case: nothing is executed and nothing
from the message is echoed except a model or GPU name reduced to name characters.)"""

from __future__ import annotations

import re

from service.parser.normalize import MAX_CHARS, Cleaned

_TRACE = re.compile(
    r"traceback \(most recent call last\)|^\s*file \"[^\"\n]{1,300}\", line \d+|"
    r"^\s*at [\w.$<>]+\([\w.]*:\d+\)|exception in thread|segmentation fault|core dumped|"
    r"^\s*(?:\w+\.)*\w*(?:error|exception): .{0,200}\n\s*(?:at|file)\b", re.I | re.M)
_SQL = re.compile(r"\b(?:select\s+[\w*, ]{1,80}\s+from|drop\s+table|insert\s+into|delete\s+from|"
                  r"union\s+(?:all\s+)?select|update\s+\w+\s+set|truncate\s+table)\b", re.I)
_LOG_LINE = re.compile(r"^\s*\[?\d{4}-\d{2}-\d{2}[ t]\d{2}:\d{2}", re.M)

TOO_LONG = f"That message is over {MAX_CHARS:,} characters."
EMPTY = "I didn't find any words in that."
TRACE = "That looks like a stack trace or a log, not a question."
SQL = "That looks like SQL, not a question."


def looks_like_sql(text: str) -> bool:
    return _SQL.search(text) is not None


def problem(raw: object, cleaned: Cleaned) -> str | None:
    """Why the message cannot be parsed at all, or None."""
    if cleaned.too_long:
        return TOO_LONG
    if not re.search(r"[a-zA-Z0-9?]", cleaned.text):
        return EMPTY
    if _TRACE.search(cleaned.text) or len(_LOG_LINE.findall(cleaned.text)) >= 3:
        return TRACE
    return None
