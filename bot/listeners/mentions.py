"""``@fitcheck ...`` in a channel: the answer goes into the thread (a mention inside a thread
follows up the bot's last answer there)."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_bolt.context.async_context import AsyncBoltContext
from slack_sdk.web.async_client import AsyncWebClient

from bot.deps import BotDeps
from bot.listeners.threads import answer, from_person


def register(app: AsyncApp, deps: BotDeps) -> None:
    @app.event("app_mention")
    async def on_mention(ack: AsyncAck, event: dict[str, Any], body: dict[str, Any],
                         context: AsyncBoltContext, client: AsyncWebClient) -> None:
        await ack()
        if not from_person(event):
            return
        deps.background.spawn(answer(deps, client, context, event, reply_in_thread=True,
                                     event_id=body.get("event_id")), "mention")
