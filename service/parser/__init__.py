"""The chat-question parser: free text (Slack messages, pasted launch commands and configs) to
request fields, an intent and what was read how. Pure: no I/O, no network, no answers.

``parse(text, previous)`` never raises; ``service.asking`` answers what it understood.
"""

from __future__ import annotations

from service.parser.parse import parse
from service.parser.types import Parsed

__all__ = ["Parsed", "parse"]
