"""``message`` events: direct messages (answered beside the question, or in its thread), and
follow-ups in channel threads the bot answered in ("what about seq 8192?", no mention needed;
silence when the message asks nothing). Mentions are left to the ``app_mention`` listener."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext
from slack_sdk.web.async_client import AsyncWebClient

from bot.deps import BotDeps
from bot.listeners.threads import answer, from_person


def register(app: AsyncApp, deps: BotDeps) -> None:
    @app.event("message")
    async def on_message(ack: AsyncAck, event: dict[str, Any], body: dict[str, Any],
                         context: AsyncBoltContext, client: AsyncWebClient) -> None:
        await ack()
        if not from_person(event):
            return
        event_id = body.get("event_id")
        if event.get("channel_type") == "im":
            deps.background.spawn(answer(deps, client, context, event, reply_in_thread=False,
                                         event_id=event_id), "dm")
            return
        thread_ts = event.get("thread_ts")
        mention = f"<@{context.bot_user_id}" if context.bot_user_id else None
        if not thread_ts or thread_ts == event.get("ts") or (mention and mention in event["text"]):
            return
        deps.background.spawn(_follow_up(deps, client, context, event, thread_ts, event_id),
                              "thread follow-up")


async def _follow_up(deps: BotDeps, client: AsyncWebClient, context: AsyncBoltContext,
                     event: dict[str, Any], thread_ts: str, event_id: str | None) -> None:
    ours = ((bool(context.bot_user_id) and event.get("parent_user_id") == context.bot_user_id)
            or await deps.follows_thread(event["channel"], thread_ts))
    if ours:
        await answer(deps, client, context, event, reply_in_thread=True, quiet_if_nothing=True,
                     event_id=event_id)
