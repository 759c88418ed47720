"""Buttons under an answer: re-ask with one setting changed and replace the answer in place
(``chat.update`` for the bot's own posts; the response URL for slash-command and ephemeral
answers, or when the update is refused). If the service fails, the apology goes to the presser
only and the answer stays. The report button is a link: its click is only acknowledged. The
launch button posts the plan's launch config in the answer's thread (read from the service by
the answer's permalink)."""

from __future__ import annotations

import re
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bot.blocks import Message, section
from bot.constants import ACTION_LAUNCH, ACTION_PREFIX, ACTION_REPORT
from bot.deps import BotDeps
from bot.followups import decode_press
from bot.launch_post import launch_message
from bot.listeners.unfurl import report_query
from bot.service_client import ServiceError
from bot.slack_io import post, respond, update


def register(app: AsyncApp, deps: BotDeps) -> None:
    @app.action(re.compile("^" + re.escape(ACTION_PREFIX)))
    async def on_next(ack: AsyncAck, body: dict[str, Any], action: dict[str, Any],
                      client: AsyncWebClient) -> None:
        await ack()
        deps.background.spawn(_reanswer(deps, client, body, action), "button")

    @app.action(ACTION_REPORT)
    async def on_report(ack: AsyncAck) -> None:
        await ack()

    @app.action(ACTION_LAUNCH)
    async def on_launch(ack: AsyncAck, body: dict[str, Any], action: dict[str, Any],
                        client: AsyncWebClient) -> None:
        await ack()
        deps.background.spawn(_post_launch(deps, client, body, action), "launch")


async def _post_launch(deps: BotDeps, client: AsyncWebClient, body: dict[str, Any],
                       action: dict[str, Any]) -> None:
    link = action.get("value")
    query = report_query(link) if isinstance(link, str) else None
    response_url = body.get("response_url")
    if query is None:
        return
    try:
        answer = await deps.service.permalink(query, request_id=body.get("trigger_id"))
        message = launch_message(answer, link if isinstance(link, str) else None)
    except ServiceError as exc:
        message = None
        if response_url:
            await respond(response_url, Message(
                "The launch config could not be fetched", [section(
                    f":warning: The fitcheck service did not answer ({exc.status}); try the "
                    "button again, or open the report.")]), response_type="ephemeral")
    if message is None:
        return
    container = body.get("container") or {}
    channel = container.get("channel_id")
    thread = (body.get("message") or {}).get("thread_ts") or container.get("message_ts")
    if not container.get("is_ephemeral") and channel and thread \
            and await post(client, channel, message, thread_ts=thread):
        return
    if response_url:
        await respond(response_url, message, response_type="ephemeral")

async def _reanswer(deps: BotDeps, client: AsyncWebClient, body: dict[str, Any],
                    action: dict[str, Any]) -> None:
    press = decode_press(action.get("value"))
    if press is None:
        return
    reply = await deps.reply(press.text, press.previous, request_id=body.get("trigger_id"))
    response_url = body.get("response_url")
    if reply.result is None:
        if response_url:
            await respond(response_url, reply.message(), response_type="ephemeral")
        return
    message = reply.message(asked=press.text)
    container = body.get("container") or {}
    channel, ts = container.get("channel_id"), container.get("message_ts")
    if (not container.get("is_ephemeral") and channel and ts
            and await update(client, channel, ts, message)):
        return
    if response_url:
        await respond(response_url, message, replace_original=True)
