"""The chat-question parser: free text (Slack messages, pasted training arguments) to request
fields, an intent, the engine's answer and the reply the bot posts. Pure: no I/O, no network.

``ask(text, previous)`` never raises; ``parse(text, previous)`` exposes what was understood.
"""

from __future__ import annotations

from service.parser.ask import ask
from service.parser.parse import parse
from service.parser.types import AskAnswer, Parsed

__all__ = ["AskAnswer", "Parsed", "ask", "parse"]
