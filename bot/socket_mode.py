"""Socket Mode: the app's traffic over Slack's WebSocket (``SLACK_APP_TOKEN``, no public URL),
plus the ``/healthz`` server for the orchestrator on ``FITCHECK_BOT_PORT``."""

from __future__ import annotations

import asyncio
import logging

import uvicorn
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp

from bot.deps import BotDeps
from bot.http_server import create_http_app
from bot.settings import BotSettings

log = logging.getLogger("fitcheck_bot")


class SocketModeRunner:
    """The WebSocket handler and the health server, started and stopped together."""

    def __init__(self, settings: BotSettings, deps: BotDeps, app: AsyncApp) -> None:
        token = settings.app_token.get_secret_value() if settings.app_token else ""
        self.handler = AsyncSocketModeHandler(app, app_token=token, web_client=app.client)
        health = create_http_app(deps, None, "socket", connected=self._connected)
        self.server = uvicorn.Server(uvicorn.Config(
            health, host=settings.host, port=settings.port, log_config=None, access_log=False,
            lifespan="on"))

    async def _connected(self) -> bool:
        return bool(await self.handler.client.is_connected())

    async def run(self, connect: bool = True) -> None:
        """Serve ``/healthz`` and (``connect``) hold the WebSocket until the server is told to
        stop (SIGTERM/SIGINT, or ``stop()``)."""
        serving = asyncio.create_task(self.server.serve())
        try:
            if connect:
                await self.handler.connect_async()  # type: ignore[no-untyped-call]
                log.info("connected to Slack in Socket Mode")
            await serving
        finally:
            if connect:
                await self.handler.close_async()  # type: ignore[no-untyped-call]
            if not serving.done():
                self.stop()
                await serving

    def stop(self) -> None:
        self.server.should_exit = True
