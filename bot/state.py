"""The request a thread follow-up builds on, read back from the thread itself: the metadata of
the bot's latest answer there (``fitcheck_answer`` / ``parsed``), else the request its buttons
carry (answers posted through a response URL have no metadata). Nothing is kept server-side."""

from __future__ import annotations

from typing import Any

from bot.constants import ACTION_PREFIX, METADATA_EVENT
from bot.followups import decode_press


def _ours(message: dict[str, Any], bot_id: str | None, bot_user_id: str | None) -> bool:
    return bool((bot_id and message.get("bot_id") == bot_id)
                or (bot_user_id and message.get("user") == bot_user_id))


def _from_metadata(message: dict[str, Any]) -> dict[str, Any] | None:
    metadata = message.get("metadata")
    if not isinstance(metadata, dict) or metadata.get("event_type") != METADATA_EVENT:
        return None
    parsed = (metadata.get("event_payload") or {}).get("parsed")
    return parsed if isinstance(parsed, dict) else None


def _from_buttons(message: dict[str, Any]) -> dict[str, Any] | None:
    for block in message.get("blocks") or []:
        if not isinstance(block, dict) or block.get("type") != "actions":
            continue
        for element in block.get("elements") or []:
            if str(element.get("action_id", "")).startswith(ACTION_PREFIX):
                press = decode_press(element.get("value"))
                if press is not None:
                    return press.base
    return None


def previous_from(messages: list[dict[str, Any]], bot_id: str | None,
                  bot_user_id: str | None) -> dict[str, Any] | None:
    """The parsed request of the bot's latest answer among ``messages`` (oldest first)."""
    for message in reversed(messages):
        if not _ours(message, bot_id, bot_user_id):
            continue
        parsed = _from_metadata(message)
        if parsed is None:
            parsed = _from_buttons(message)
        if parsed:
            return parsed
    return None
