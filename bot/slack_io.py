"""Talking to Slack: the Web API client (at ``SLACK_API_URL``) and response-URL posts, both
backing off on rate limits (HTTP 429: wait ``Retry-After``, up to three times) and retrying
dropped connections. Slack's answers are checked and failures logged, never raised into a
listener."""

from __future__ import annotations

import logging
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

from bot.blocks import Message

log = logging.getLogger("fitcheck_bot")


def retry_handlers() -> list[AsyncRetryHandler]:
    return [AsyncConnectionErrorRetryHandler(max_retry_count=2),
            AsyncRateLimitErrorRetryHandler(max_retry_count=3)]


def web_client(token: str, api_url: str) -> AsyncWebClient:
    base = api_url if api_url.endswith("/") else api_url + "/"
    return AsyncWebClient(token=token, base_url=base, timeout=10, retry_handlers=retry_handlers())


def _fallback(payload: dict[str, Any], exc: SlackApiError) -> dict[str, Any] | None:
    """What to post after Slack refused ``payload``: without the metadata when that was the
    problem (the buttons still carry the request), the plain text when the blocks were; None
    when the refusal was about something else (the channel, the token)."""
    error = str(exc.response.get("error") or "")
    if "metadata" in error and "metadata" in payload:
        return {k: v for k, v in payload.items() if k != "metadata"}
    if any(word in error for word in ("block", "too_long", "invalid_arguments")) \
            and "blocks" in payload:
        return {"text": payload["text"]}
    return None


async def post(client: AsyncWebClient, channel: str, message: Message,
               thread_ts: str | None = None) -> str | None:
    """``chat.postMessage``; the new message's ts, or None when Slack refused it. Metadata or
    blocks Slack refuses are dropped, down to the plain-text fallback."""
    payload: dict[str, Any] | None = message.payload()
    while payload is not None:
        try:
            response = await client.chat_postMessage(
                channel=channel, thread_ts=thread_ts, unfurl_links=False, unfurl_media=False,
                **payload)
        except SlackApiError as exc:
            log.warning("chat.postMessage failed: %s", exc.response.get("error"))
            payload = _fallback(payload, exc)
            continue
        ts = response.get("ts")
        return ts if isinstance(ts, str) else None
    return None


async def update(client: AsyncWebClient, channel: str, ts: str, message: Message) -> bool:
    """``chat.update`` of one of the bot's messages, in place."""
    try:
        await client.chat_update(channel=channel, ts=ts, **message.payload())
    except SlackApiError as exc:
        log.warning("chat.update failed: %s", exc.response.get("error"))
        return False
    return True


async def respond(response_url: str, message: Message, *, response_type: str | None = None,
                  replace_original: bool = False) -> bool:
    """A post to a slash command's or a button's response URL (no metadata: it takes none)."""
    body: dict[str, Any] = {"text": message.text, "blocks": message.blocks}
    if response_type:
        body["response_type"] = response_type
    if replace_original:
        body["replace_original"] = True
    client = AsyncWebhookClient(response_url, timeout=10, retry_handlers=retry_handlers())
    for attempt in (body, {k: v for k, v in body.items() if k != "blocks"}):
        try:
            response = await client.send_dict(attempt)
        except Exception as exc:  # aiohttp errors after the retries
            log.warning("response_url post failed: %s", type(exc).__name__)
            return False
        if response.status_code == 200:
            return True
        log.warning("response_url post refused: HTTP %s %s", response.status_code,
                    (response.body or "")[:100])
        if response.status_code != 400 or "blocks" not in attempt:
            return False
    return False


async def unfurl(client: AsyncWebClient, event: dict[str, Any], unfurls: dict[str, Any]) -> bool:
    """``chat.unfurl`` for a ``link_shared`` event (posted message or message composer)."""
    where: dict[str, Any]
    if event.get("unfurl_id") and event.get("source") == "composer":
        where = {"unfurl_id": event["unfurl_id"], "source": "composer"}
    else:
        where = {"channel": event.get("channel"), "ts": event.get("message_ts")}
    try:
        await client.chat_unfurl(unfurls=unfurls, **where)
    except SlackApiError as exc:
        log.warning("chat.unfurl failed: %s", exc.response.get("error"))
        return False
    return True


async def thread_messages(client: AsyncWebClient, channel: str, thread_ts: str,
                          pages: int = 5) -> list[dict[str, Any]]:
    """The thread's messages with their metadata (``conversations.replies``), oldest first."""
    out: list[dict[str, Any]] = []
    cursor: str | None = None
    for _ in range(pages):
        try:
            response = await client.conversations_replies(
                channel=channel, ts=thread_ts, include_all_metadata=True, limit=200, cursor=cursor)
        except SlackApiError as exc:
            log.warning("conversations.replies failed: %s", exc.response.get("error"))
            break
        out.extend(m for m in response.get("messages") or [] if isinstance(m, dict))
        cursor = (response.get("response_metadata") or {}).get("next_cursor") or None
        if not cursor:
            break
    return out
