"""Pasted fitcheck report links (``.../v1/estimate?...``): ``link_shared`` -> the service's
JSON for the link's query -> ``chat.unfurl`` with the verdict and the table. The service is
always asked at ``FITCHECK_SERVICE_URL``, whatever host the link names (only the query is used)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from slack_bolt.async_app import AsyncAck, AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bot.blocks import context, section, unfurl_blocks
from bot.deps import BotDeps
from bot.limits import fit_blocks
from bot.safety import safe_mrkdwn
from bot.service_client import ServiceError
from bot.slack_io import unfurl

MAX_LINKS = 5


def report_query(url: str) -> str | None:
    """The query of a report permalink, or None for any other link."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.path.rstrip("/").endswith("/v1/estimate"):
        return None
    return parts.query or None


def register(app: AsyncApp, deps: BotDeps) -> None:
    @app.event("link_shared")
    async def on_link_shared(ack: AsyncAck, event: dict[str, Any], client: AsyncWebClient) -> None:
        await ack()
        deps.background.spawn(_unfurl(deps, client, event), "unfurl")


async def _card(deps: BotDeps, url: str, query: str) -> dict[str, Any]:
    try:
        answer = await deps.service.permalink(query)
    except ServiceError as exc:
        what = ("This fitcheck link could not be read" if exc.kind == "rejected"
                else "The fitcheck service is not answering right now")
        return {"blocks": fit_blocks([section(f":warning: {what} ({safe_mrkdwn(exc.status)})."),
                                      context("Open the link for the report.")])}
    return {"blocks": unfurl_blocks(answer, url)}


async def _unfurl(deps: BotDeps, client: AsyncWebClient, event: dict[str, Any]) -> None:
    unfurls: dict[str, Any] = {}
    for link in (event.get("links") or [])[:MAX_LINKS]:
        url = link.get("url") if isinstance(link, dict) else None
        query = report_query(url) if isinstance(url, str) else None
        if url and query and url not in unfurls:
            unfurls[url] = await _card(deps, url, query)
    if unfurls:
        await unfurl(client, event, unfurls)
