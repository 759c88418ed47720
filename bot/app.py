"""Builds the bot: a slack-bolt ``AsyncApp`` with the Web API client at ``SLACK_API_URL``,
request signatures verified in HTTP mode, a middleware that drops Slack's retries and repeated
event ids, and the listeners of ``bot.listeners``. ``REGISTERED`` names what it listens to (the
Slack app manifest is tested against it)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Final

from slack_bolt.async_app import AsyncApp
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse

from bot.background import Background
from bot.constants import ACTION_PREFIX, ACTION_REPORT, COMMAND
from bot.dedup import SeenStore, open_store
from bot.deps import BotDeps
from bot.listeners import actions, dm, home, mentions, slash, unfurl
from bot.service_client import ServiceClient
from bot.settings import BotSettings
from bot.slack_io import web_client

log = logging.getLogger("fitcheck_bot")

REGISTERED: Final = {
    "events": ("app_mention", "message", "link_shared", "app_home_opened"),
    "commands": (COMMAND,),
    "actions": (ACTION_PREFIX + "*", ACTION_REPORT),
}


def _not_token_unused(record: logging.LogRecord) -> bool:
    """Bolt warns that ``SLACK_BOT_TOKEN`` from the environment is unused when a client is
    given; ours carries that token (and the API URL and retry handlers)."""
    return "will be unused" not in record.getMessage()


class ConfigError(ValueError):
    """A setting the chosen mode needs is missing."""


def _header(request: AsyncBoltRequest, name: str) -> str | None:
    values = request.headers.get(name)
    return values[0] if values else None


def skip_repeats(seen: SeenStore, ttl_s: int) -> Callable[..., Awaitable[BoltResponse | None]]:
    """Slack retries an event it thinks we missed (``x-slack-retry-num``). The bot acks before
    any work, so a retry after a timeout is dropped at once; any delivery whose event id was
    already claimed (Redis ``SET NX``, shared by replicas) is dropped too. Both are acked."""

    async def middleware(request: AsyncBoltRequest,
                         next_: Callable[[], Awaitable[None]]) -> BoltResponse | None:
        if _header(request, "x-slack-retry-num") and \
                _header(request, "x-slack-retry-reason") == "http_timeout":
            return BoltResponse(status=200, body="")
        event_id = request.body.get("event_id") if isinstance(request.body, dict) else None
        if isinstance(event_id, str) and not await seen.claim(f"event:{event_id}", ttl_s):
            log.info("duplicate event dropped: %s", event_id)
            return BoltResponse(status=200, body="")
        await next_()
        return None

    return middleware


def open_deps(settings: BotSettings) -> BotDeps:
    return BotDeps(settings=settings,
                   service=ServiceClient(settings.service_url, settings.service_timeout_s),
                   seen=open_store(settings.redis_url, settings.redis_prefix),
                   background=Background())


def build_app(settings: BotSettings, deps: BotDeps, *, socket_mode: bool) -> AsyncApp:
    token = settings.bot_token.get_secret_value()
    if not token:
        raise ConfigError("SLACK_BOT_TOKEN is not set")
    secret = settings.signing_secret.get_secret_value() if settings.signing_secret else ""
    if not socket_mode and not secret:
        raise ConfigError("HTTP mode needs SLACK_SIGNING_SECRET (to verify Slack's requests)")
    if socket_mode and not (settings.app_token and settings.app_token.get_secret_value()):
        raise ConfigError("Socket Mode needs SLACK_APP_TOKEN (xapp-...)")
    bolt_log = logging.getLogger("fitcheck_bot.bolt")
    bolt_log.addFilter(_not_token_unused)
    app = AsyncApp(name="fitcheck", client=web_client(token, settings.slack_api_url),
                   signing_secret=secret, request_verification_enabled=not socket_mode,
                   process_before_response=False, logger=bolt_log)
    app.middleware(skip_repeats(deps.seen, settings.dedup_ttl_s))
    for module in (mentions, dm, slash, actions, unfurl, home):
        module.register(app, deps)
    return app
