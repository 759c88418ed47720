"""``fitcheck bot [--http] [--port N]``: Socket Mode by default when ``SLACK_APP_TOKEN`` is set,
HTTP mode (``/slack/events``) with ``--http`` or without an app token."""

from __future__ import annotations

import asyncio
import logging
import sys

import uvicorn
from slack_bolt.async_app import AsyncApp

from bot.app import ConfigError, build_app, open_deps
from bot.deps import BotDeps
from bot.http_server import create_http_app
from bot.logs import setup_logging
from bot.settings import BotSettings
from bot.socket_mode import SocketModeRunner

log = logging.getLogger("fitcheck_bot")


def secrets_of(settings: BotSettings) -> list[str]:
    return [s.get_secret_value() for s in (settings.bot_token, settings.app_token,
                                           settings.signing_secret) if s is not None]


async def _socket_mode(settings: BotSettings, deps: BotDeps, app: AsyncApp) -> None:
    # built inside the loop: the Socket Mode client opens its aiohttp session at construction
    await SocketModeRunner(settings, deps, app).run()


def main(http: bool = False, port: int | None = None) -> int:
    settings = BotSettings()
    if port is not None:
        settings = settings.model_copy(update={"port": port})
    setup_logging(settings.log_level, secrets_of(settings))
    socket_mode = settings.use_socket_mode(force_http=http)
    deps = open_deps(settings)
    try:
        app = build_app(settings, deps, socket_mode=socket_mode)
    except ConfigError as exc:
        print(f"fitcheck bot: {exc}", file=sys.stderr)
        return 2
    log.info("fitcheck bot starting: %s mode, service %s, dedup %s, port %s",
             "socket" if socket_mode else "http", settings.service_url, deps.seen.kind, settings.port)
    if socket_mode:
        asyncio.run(_socket_mode(settings, deps, app))
    else:
        uvicorn.run(create_http_app(deps, app, "http"), host=settings.host, port=settings.port,
                    log_config=None, access_log=False, proxy_headers=True)
    return 0
