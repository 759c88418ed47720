"""The App Home tab: how to ask, where, and examples."""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.blocks import context, section
from bot.constants import COMMAND, EXAMPLES, MAX_HOME_BLOCKS
from bot.deps import BotDeps
from bot.limits import fit_blocks, plain

log = logging.getLogger("fitcheck_bot")


def home_view() -> dict[str, Any]:
    examples = "\n".join(f"• `{e}`" for e in EXAMPLES)
    blocks = [
        {"type": "header", "text": plain("fitcheck: will it fit, and on how many GPUs?")},
        section("Ask me how much GPU memory, and how many GPUs, a training, fine-tuning or "
                "serving job needs. I answer with the verdict, memory per GPU by component, "
                "the assumptions, and a link to the full report."),
        {"type": "divider"},
        section("*Where to ask*\n"
                "• Mention me in a channel: `@fitcheck llama-3-8b on 8x A100 40GB` "
                "(I answer in the thread)\n"
                "• Send me a direct message\n"
                f"• `{COMMAND} <question>` anywhere; `{COMMAND} private <question>` for your eyes only\n"
                "• Follow up in the thread: `what about seq 8192?`, `and with zero-2?`\n"
                "• Press a button under an answer to re-ask it with one thing changed\n"
                "• Paste a fitcheck report link and I'll show its verdict"),
        section("*For example*\n" + examples),
        context("Say `help` for more. GB = 10^9 bytes. Unstated settings are assumed and "
                "listed under each answer."),
    ]
    return {"type": "home", "blocks": fit_blocks(blocks, MAX_HOME_BLOCKS)}


def register(app: AsyncApp, deps: BotDeps) -> None:
    @app.event("app_home_opened")
    async def on_home(ack: AsyncAck, event: dict[str, Any], client: AsyncWebClient) -> None:
        await ack()
        if event.get("tab", "home") != "home" or not event.get("user"):
            return
        deps.background.spawn(_publish(client, event["user"]), "home")


async def _publish(client: AsyncWebClient, user: str) -> None:
    try:
        await client.views_publish(user_id=user, view=home_view())
    except SlackApiError as exc:
        log.warning("views.publish failed: %s", exc.response.get("error"))
