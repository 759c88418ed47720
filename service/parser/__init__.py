"""The chat-question parser: free text (Slack messages, pasted launch commands and configs) to
request fields, an intent and what was read how. Pure: no I/O, no network, no answers.

A pipeline with data between the steps (``parse``): clean the text; read names and switches
(models, GPUs and their counts, pasted settings, words like "zero-3"), each claiming its span;
tokenize the rest (``tokens``); bind every number to the attribute its neighbouring words name,
by type and side, never by position (``vocabulary``, ``attributes``, ``binding``); turn bindings
into findings and keep what could not be read (``readings``); assemble the request, the intent
and what to say back (``assemble``). Numbers no step could use are ``Parsed.ignored`` and named
in the reply. Cost is linear in the text and every cache is bounded.

``parse(text, previous)`` never raises; ``service.asking`` answers what it understood.
"""

from __future__ import annotations

from service.parser.parse import parse
from service.parser.types import Parsed

__all__ = ["Parsed", "parse"]
