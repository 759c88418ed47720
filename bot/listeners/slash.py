"""``/fitcheck QUESTION``: acknowledged at once, answered through the response URL. Who sees
the answer: ``FITCHECK_BOT_SLASH_VISIBILITY`` (the channel by default), or the first word of the
text, ``private`` (only the asker) or ``public`` (the channel). Help, questions back and
apologies go to the asker only."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp

from bot.constants import COMMAND
from bot.deps import BotDeps
from bot.safety import clean_question
from bot.slack_io import respond

PRIVATE = frozenset({"private", "--private", "-p", "me", "--me"})
PUBLIC = frozenset({"public", "--public", "channel", "--channel"})


def visibility(text: str, default: str) -> tuple[str, str]:
    """``(response_type, question)`` from the command's text."""
    first, _, rest = text.strip().partition(" ")
    if first.lower() in PRIVATE:
        return "ephemeral", rest.strip()
    if first.lower() in PUBLIC:
        return "in_channel", rest.strip()
    return default, text.strip()


def register(app: AsyncApp, deps: BotDeps) -> None:
    @app.command(COMMAND)
    async def on_command(ack: AsyncAck, command: dict[str, Any]) -> None:
        await ack()
        deps.background.spawn(_answer(deps, command), "slash command")


async def _answer(deps: BotDeps, command: dict[str, Any]) -> None:
    response_type, question = visibility(command.get("text") or "", deps.settings.slash_visibility)
    text = clean_question(question) or "help"
    reply = await deps.reply(text, None, request_id=command.get("trigger_id"))
    if not reply.answered:
        response_type = "ephemeral"
    asked = text if response_type == "in_channel" else None
    await respond(command["response_url"], reply.message(asked), response_type=response_type)
