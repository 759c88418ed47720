"""Answering in a thread, shared by mentions, DMs and follow-ups: the previous request comes
from the thread (the bot's last answer there), the answer goes into the thread, and the thread
is remembered so a follow-up there needs no mention."""

from __future__ import annotations

from typing import Any

from slack_bolt.context.async_context import AsyncBoltContext
from slack_sdk.web.async_client import AsyncWebClient

from bot.deps import BotDeps
from bot.safety import clean_question
from bot.slack_io import post, thread_messages
from bot.state import previous_from


def from_person(event: dict[str, Any]) -> bool:
    """A plain message a person wrote: no subtype (edits, joins, bot messages, ...), no bot."""
    return (not event.get("subtype") and not event.get("bot_id") and not event.get("bot_profile")
            and isinstance(event.get("user"), str) and isinstance(event.get("text"), str))


async def previous_in_thread(client: AsyncWebClient, context: AsyncBoltContext, channel: str,
                             thread_ts: str) -> dict[str, Any] | None:
    messages = await thread_messages(client, channel, thread_ts)
    return previous_from(messages, context.bot_id, context.bot_user_id)


async def answer(deps: BotDeps, client: AsyncWebClient, context: AsyncBoltContext,
                 event: dict[str, Any], *, reply_in_thread: bool, quiet_if_nothing: bool = False,
                 event_id: str | None = None) -> None:
    """Answer one message. ``reply_in_thread``: in the message's thread (started at the message
    when it has none), else beside it; ``quiet_if_nothing``: say nothing when the text asked
    nothing (a follow-up nobody addressed to the bot, like "thanks!")."""
    channel = event["channel"]
    in_thread = event.get("thread_ts")
    previous = await previous_in_thread(client, context, channel, in_thread) if in_thread else None
    text = clean_question(event.get("text", ""), context.bot_user_id)
    reply = await deps.reply(text, previous, request_id=event_id)
    if quiet_if_nothing and (reply.error is not None or reply.result is None
                             or reply.result.intent in ("invalid", "help")):
        return
    thread_ts = (in_thread or event["ts"]) if reply_in_thread else in_thread
    if thread_ts:  # before posting: a follow-up may arrive as soon as the answer is seen
        await deps.remember_thread(channel, thread_ts)
    await post(client, channel, reply.message(), thread_ts)
