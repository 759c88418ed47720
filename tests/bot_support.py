"""Helpers for the bot's tests: the bot's real HTTP endpoint under uvicorn on a loopback port,
pointed at the fake Slack Web API (``bot_fake_slack``) and at a service (the real one, or an
``httpx`` transport such as a respx router); requests signed like Slack signs them."""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import httpx
from bot_fake_slack import BOT_USER, TEAM, FakeSlack, fake_slack, serve

from bot.app import build_app
from bot.background import Background
from bot.dedup import open_store
from bot.deps import BotDeps
from bot.http_server import create_http_app
from bot.service_client import ServiceClient
from bot.settings import BotSettings

SECRET = "8f14e45fceea167a5a36dedd4bea2543"
TOKEN = "xoxb-1111-2222-secretbottoken"
APP_TOKEN = "xapp-1-A111-222-secretapptoken"
USER = "U0ASKER"
CHANNEL = "C0CHANNEL"
DM = "D0DIRECT"
QUESTION_FITS = "7B, seq 4096, ZeRO-3, A100 40GB?"
_ids = itertools.count(1)


def sign(body: str, timestamp: int | None = None, secret: str = SECRET) -> dict[str, str]:
    """Slack's v0 signature headers for a body."""
    ts = str(int(time.time()) if timestamp is None else timestamp)
    digest = hmac.new(secret.encode(), f"v0:{ts}:{body}".encode(), hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={digest}"}


def event_id() -> str:
    return f"Ev{next(_ids):08d}{uuid.uuid4().hex[:6].upper()}"


def new_ts() -> str:
    return f"{1_800_000_000 + next(_ids)}.000200"


@dataclass
class BotUnderTest:
    url: str
    slack: FakeSlack
    deps: BotDeps

    def send(self, body: str, content_type: str, headers: dict[str, str] | None = None,
             signed: bool = True) -> httpx.Response:
        sent = {"Content-Type": content_type, **(sign(body) if signed else {}), **(headers or {})}
        return httpx.post(self.url + "/slack/events", content=body, headers=sent, timeout=10)

    def event(self, event: dict[str, Any], eid: str | None = None,
              headers: dict[str, str] | None = None, signed: bool = True) -> httpx.Response:
        envelope = {"token": "legacy", "team_id": TEAM, "api_app_id": "A0FITCHECK",
                    "type": "event_callback", "event_id": eid or event_id(),
                    "event_time": int(time.time()), "event": event,
                    "authorizations": [{"team_id": TEAM, "user_id": BOT_USER, "is_bot": True}]}
        return self.send(json.dumps(envelope), "application/json", headers, signed)

    def command(self, text: str, channel: str = CHANNEL) -> httpx.Response:
        form = {"token": "legacy", "team_id": TEAM, "channel_id": channel, "user_id": USER,
                "command": "/fitcheck", "text": text, "api_app_id": "A0FITCHECK",
                "response_url": self.slack.response_url(channel), "trigger_id": event_id()}
        return self.send(urlencode(form), "application/x-www-form-urlencoded")

    def press(self, button: dict[str, Any], message_ts: str, channel: str = CHANNEL,
              ephemeral: bool = False) -> httpx.Response:
        payload = {"type": "block_actions", "team": {"id": TEAM}, "user": {"id": USER},
                   "api_app_id": "A0FITCHECK", "trigger_id": event_id(),
                   "container": {"type": "message", "message_ts": message_ts,
                                 "channel_id": channel, "is_ephemeral": ephemeral},
                   "channel": {"id": channel}, "response_url": self.slack.response_url(channel),
                   "actions": [{**button, "block_id": "fitcheck_next",
                                "action_ts": str(time.time())}]}
        return self.send(urlencode({"payload": json.dumps(payload)}),
                         "application/x-www-form-urlencoded")

    def wait_idle(self, spawned: int, timeout: float = 10.0) -> None:
        """Until ``spawned`` pieces of work have started and none is still running."""
        deadline = time.monotonic() + timeout
        while self.deps.background.spawned < spawned or self.deps.background.pending:
            assert time.monotonic() < deadline, "the bot's work did not finish"
            time.sleep(0.005)


def settings_for(slack: FakeSlack, service_url: str, **extra: Any) -> BotSettings:
    values = {"SLACK_BOT_TOKEN": TOKEN, "SLACK_SIGNING_SECRET": SECRET,
              "SLACK_API_URL": slack.api_url, "FITCHECK_SERVICE_URL": service_url,
              "FITCHECK_BOT_MODE": "http", **extra}
    return BotSettings(**values)


@contextmanager
def running_bot(service_url: str = "http://fitcheck-service.test",
                transport: httpx.AsyncBaseTransport | None = None,
                **extra: Any) -> Iterator[BotUnderTest]:
    """The bot's HTTP server on a free loopback port, with its own fake Slack."""
    with fake_slack() as slack:
        settings = settings_for(slack, service_url, **extra)
        deps = BotDeps(settings=settings,
                       service=ServiceClient(settings.service_url, settings.service_timeout_s,
                                             transport=transport),
                       seen=open_store(settings.redis_url, settings.redis_prefix),
                       background=Background())
        app = build_app(settings, deps, socket_mode=False)
        with serve(create_http_app(deps, app, "http")) as url:
            yield BotUnderTest(url, slack, deps)


def mention(text: str, channel: str = CHANNEL, **extra: Any) -> dict[str, Any]:
    return {"type": "app_mention", "user": USER, "text": f"<@{BOT_USER}> {text}",
            "ts": new_ts(), "channel": channel, "event_ts": new_ts(), **extra}


def message(text: str, channel: str = DM, channel_type: str = "im", **extra: Any) -> dict[str, Any]:
    return {"type": "message", "user": USER, "text": text, "ts": new_ts(), "channel": channel,
            "channel_type": channel_type, "event_ts": new_ts(), **extra}


def block_text(blocks: list[dict[str, Any]]) -> str:
    """Everything a person reads in the blocks, as text (section, context, button labels)."""
    out: list[str] = []
    for block in blocks:
        if "text" in block:
            out.append(block["text"]["text"])
        for element in block.get("elements", []):
            text = element.get("text")
            out.append(text["text"] if isinstance(text, dict) else str(text or ""))
    return "\n".join(out)


def buttons(blocks: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The buttons of an answer by action id."""
    return {e["action_id"]: e for b in blocks if b["type"] == "actions" for e in b["elements"]}


@contextmanager
def real_service(**settings: Any) -> Iterator[str]:
    """The fitcheck service itself under uvicorn on a loopback port (the bot's tests may import
    the service; the bot may not)."""
    from service.app import create_app
    from service.settings import Settings

    with serve(create_app(Settings(log_level="WARNING", **settings))) as url:
        yield url
