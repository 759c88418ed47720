"""The bot's logs: JSON lines on stderr (like the service's), with every Slack token and secret
scrubbed, whatever logger wrote it (slack_sdk, slack_bolt, aiohttp, uvicorn, ours). The filter
sits on the root handler, so it sees records from every logger that propagates to the root."""

from __future__ import annotations

import json
import logging
import re
import sys
from collections.abc import Iterable
from typing import TextIO

TOKEN = re.compile(r"\b(?:xox[abposre]|xapp|xoxe\.xox[bp])-[A-Za-z0-9-]+")
REDACTED = "[redacted]"


class RedactSecrets(logging.Filter):
    """Replaces Slack-looking tokens and the configured secrets in the formatted message."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        super().__init__()
        self._secrets = sorted({s for s in secrets if len(s) >= 6}, key=len, reverse=True)

    def scrub(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, REDACTED)
        return TOKEN.sub(REDACTED, text)

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        scrubbed = self.scrub(message)
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.scrub(record.exc_text)
        if scrubbed != message or record.args:
            record.msg, record.args = scrubbed, None
        return True


class JsonLines(logging.Formatter):
    """``{"ts", "level", "logger", "msg"}`` (and ``error`` with the traceback) per line."""

    def format(self, record: logging.LogRecord) -> str:
        line = {"ts": self.formatTime(record, "%Y-%m-%dT%H:%M:%S"), "level": record.levelname.lower(),
                "logger": record.name, "msg": record.getMessage()}
        if record.exc_text:
            line["error"] = record.exc_text
        return json.dumps(line, ensure_ascii=False)


def setup_logging(level: str, secrets: Iterable[str] = (), stream: TextIO | None = None) -> logging.Handler:
    """A root handler that scrubs secrets; returns it (tests read what it wrote)."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonLines())
    handler.addFilter(RedactSecrets(secrets))
    root = logging.getLogger()
    for old in [h for h in root.handlers if getattr(h, "fitcheck_bot", False)]:
        root.removeHandler(old)
    handler.fitcheck_bot = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(level.upper())
    return handler
