"""What the listeners share: settings, the service client, the seen-store, the background
tasks; and the one flow they all use, a question in and a message out."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from bot.background import Background
from bot.blocks import Message, answer_message, error_message
from bot.dedup import SeenStore
from bot.service_client import AskResult, ServiceClient, ServiceError
from bot.settings import BotSettings

log = logging.getLogger("fitcheck_bot")


@dataclass(frozen=True, slots=True)
class Reply:
    """The service's answer, or why there is none."""

    result: AskResult | None  # None when the service failed
    error: ServiceError | None = None

    @property
    def answered(self) -> bool:
        """An estimate or comparison (not help, a question back or nonsense)."""
        return self.result is not None and self.result.answer is not None

    def message(self, asked: str | None = None) -> Message:
        """As a Slack message; ``asked``: the question, echoed above it."""
        if self.result is not None:
            return answer_message(self.result, asked)
        assert self.error is not None
        return error_message(self.error, asked)


@dataclass(slots=True)
class BotDeps:
    settings: BotSettings
    service: ServiceClient
    seen: SeenStore
    background: Background

    async def reply(self, text: str, previous: dict[str, Any] | None = None,
                    request_id: str | None = None) -> Reply:
        """The service's answer; the failure (for an apology) when the service fails."""
        try:
            result = await self.service.ask(text or "help", previous, request_id=request_id)
        except ServiceError as exc:
            log.warning("service failed (%s): %s", exc.kind, exc.status)
            return Reply(None, exc)
        return Reply(result)

    def thread_key(self, channel: str, thread_ts: str) -> str:
        return f"thread:{channel}:{thread_ts}"

    async def remember_thread(self, channel: str, thread_ts: str) -> None:
        await self.seen.claim(self.thread_key(channel, thread_ts), self.settings.thread_ttl_s)

    async def follows_thread(self, channel: str, thread_ts: str) -> bool:
        return await self.seen.exists(self.thread_key(channel, thread_ts))

    async def close(self) -> None:
        await self.background.drain()
        await self.service.close()
        await self.seen.close()
