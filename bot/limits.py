"""Block Kit within Slack's limits, whatever the service sent: ``fit_blocks`` walks the blocks
and cuts every text, list and id to its limit (see ``bot.constants``), so a post is never
refused with ``invalid_blocks`` or ``msg_too_long``."""

from __future__ import annotations

from typing import Any

from bot.constants import (
    MAX_ACTION_ELEMENTS,
    MAX_BUTTON_TEXT,
    MAX_BUTTON_VALUE,
    MAX_CONTEXT_ELEMENTS,
    MAX_CONTEXT_TEXT,
    MAX_HEADER_TEXT,
    MAX_ID,
    MAX_MESSAGE_BLOCKS,
    MAX_SECTION_TEXT,
    MAX_URL,
)
from bot.safety import truncate

Block = dict[str, Any]


def mrkdwn(text: str) -> dict[str, Any]:
    """A mrkdwn text object that Slack does not parse further (no auto-linked mentions)."""
    return {"type": "mrkdwn", "text": text, "verbatim": True}


def plain(text: str) -> dict[str, Any]:
    return {"type": "plain_text", "text": text, "emoji": True}


def _cut_text(obj: dict[str, Any], limit: int) -> None:
    text = obj.get("text")
    if isinstance(text, str):
        obj["text"] = truncate(text, limit) if text else "\u200b"


def _fit_element(element: dict[str, Any]) -> dict[str, Any] | None:
    if element.get("type") != "button":
        return element
    _cut_text(element.get("text", {}), MAX_BUTTON_TEXT)
    if len(element.get("value", "")) > MAX_BUTTON_VALUE or len(element.get("url", "")) > MAX_URL:
        return None
    if len(element.get("action_id", "")) > MAX_ID:
        return None
    return element


def _fit_block(block: Block) -> Block | None:
    kind = block.get("type")
    if len(block.get("block_id", "")) > MAX_ID:
        block.pop("block_id")
    if kind == "section":
        if "text" in block:
            _cut_text(block["text"], MAX_SECTION_TEXT)
        if "fields" in block:
            block["fields"] = block["fields"][:10]
            for field in block["fields"]:
                _cut_text(field, 2000)
    elif kind == "header":
        _cut_text(block["text"], MAX_HEADER_TEXT)
    elif kind == "context":
        block["elements"] = block["elements"][:MAX_CONTEXT_ELEMENTS]
        for element in block["elements"]:
            _cut_text(element, MAX_CONTEXT_TEXT)
    elif kind == "actions":
        kept = [e for e in map(_fit_element, block["elements"]) if e is not None]
        if not kept:
            return None
        block["elements"] = kept[:MAX_ACTION_ELEMENTS]
    return block


def fit_blocks(blocks: list[Block], max_blocks: int = MAX_MESSAGE_BLOCKS) -> list[Block]:
    """The blocks cut to Slack's limits; past ``max_blocks``, the last kept block says so."""
    fitted = [b for b in map(_fit_block, blocks) if b is not None]
    if len(fitted) <= max_blocks:
        return fitted
    return [*fitted[: max_blocks - 1],
            {"type": "context", "elements": [mrkdwn("_(shortened: open the report for the rest)_")]}]
