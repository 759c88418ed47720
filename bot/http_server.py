"""The bot's HTTP server (FastAPI): ``POST /slack/events`` (events, slash commands and
interactivity, through bolt's adapter, which verifies signatures) in HTTP mode, and
``GET /healthz`` in both modes for the orchestrator."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request, Response
from slack_bolt.adapter.fastapi.async_handler import AsyncSlackRequestHandler
from slack_bolt.async_app import AsyncApp

from bot.deps import BotDeps


def create_http_app(deps: BotDeps, slack_app: AsyncApp | None, mode: str,
                    connected: Callable[[], Awaitable[bool]] | None = None) -> FastAPI:
    """``slack_app`` None: only ``/healthz`` (Socket Mode, where Slack's traffic arrives over
    the WebSocket). ``connected``: whether that WebSocket is up, reported by ``/healthz``."""

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await deps.close()

    api = FastAPI(title="fitcheck bot", version="0.1.0", lifespan=lifespan, docs_url=None,
                  redoc_url=None, openapi_url=None)

    @api.get("/healthz")
    async def healthz() -> dict[str, Any]:
        body: dict[str, Any] = {"status": "ok", "mode": mode, "dedup": deps.seen.kind,
                                "in_flight": deps.background.pending}
        if connected is not None:
            body["connected"] = await connected()
        return body

    if slack_app is not None:
        handler = AsyncSlackRequestHandler(slack_app)

        @api.post("/slack/events")
        async def slack_events(request: Request) -> Response:
            return await handler.handle(request)

    return api
