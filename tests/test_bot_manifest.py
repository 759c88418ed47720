"""``deploy/slack-app-manifest.yml`` matches the bot: the events it subscribes to are the ones
the app listens to (and each reaches a listener), the slash command is the one registered,
interactivity is on for the buttons, and the scopes are exactly what the listeners and the Web
API methods the bot calls need."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from bot_support import BotUnderTest, new_ts, running_bot

from bot.app import REGISTERED
from bot.constants import COMMAND

ROOT = Path(__file__).resolve().parents[1]
MANIFEST: dict[str, Any] = yaml.safe_load((ROOT / "deploy" / "slack-app-manifest.yml").read_text())
BOT_DIR = ROOT / "bot"

EVENT_SCOPES = {"app_mention": "app_mentions:read", "message.channels": "channels:history",
                "message.groups": "groups:history", "message.im": "im:history",
                "link_shared": "links:read", "app_home_opened": None}
METHOD_SCOPES = {"chat_postMessage": "chat:write", "chat_update": "chat:write",
                 "chat_unfurl": "links:write", "views_publish": None,
                 "conversations_replies": None}  # replies: the history scopes above


def test_events_match_the_listeners() -> None:
    events = MANIFEST["settings"]["event_subscriptions"]["bot_events"]
    assert {e.split(".")[0] for e in events} == set(REGISTERED["events"])
    assert set(events) <= set(EVENT_SCOPES)


def test_the_slash_command_interactivity_home_and_unfurls() -> None:
    features = MANIFEST["features"]
    assert [c["command"] for c in features["slash_commands"]] == list(REGISTERED["commands"])
    assert features["slash_commands"][0]["command"] == COMMAND
    assert MANIFEST["settings"]["interactivity"]["is_enabled"] is True  # the buttons
    assert features["app_home"]["home_tab_enabled"] and features["app_home"]["messages_tab_enabled"]
    assert not features["app_home"]["messages_tab_read_only_enabled"]  # DMs
    assert features["unfurl_domains"] and features["bot_user"]["display_name"] == "fitcheck"
    assert MANIFEST["settings"]["socket_mode_enabled"] is True


def test_scopes_are_exactly_what_the_bot_uses() -> None:
    source = "\n".join(p.read_text() for p in BOT_DIR.rglob("*.py"))
    called = {m for m in METHOD_SCOPES if f"{m}(" in source}
    assert called == set(METHOD_SCOPES), "every Web API method the bot calls has a scope entry"
    needed = {s for e in MANIFEST["settings"]["event_subscriptions"]["bot_events"]
              if (s := EVENT_SCOPES[e])}
    needed |= {s for m in called if (s := METHOD_SCOPES[m])}
    needed.add("commands")
    assert set(MANIFEST["oauth_config"]["scopes"]["bot"]) == needed


def _sample(event: str) -> dict[str, Any]:
    kind, _, where = event.partition(".")
    body: dict[str, Any] = {"type": kind, "user": "U0ASKER", "text": "hi", "ts": new_ts(),
                            "channel": "C1", "event_ts": new_ts()}
    if where:
        body["channel_type"] = {"channels": "channel", "groups": "group", "im": "im"}[where]
    if kind == "link_shared":
        body["links"] = []
    if kind == "app_home_opened":
        body["tab"] = "messages"
    return body


@pytest.fixture(scope="module")
def bot() -> Iterator[BotUnderTest]:
    with running_bot("http://127.0.0.1:9") as running:  # no service: apologies are fine here
        yield running


@pytest.mark.parametrize("event", MANIFEST["settings"]["event_subscriptions"]["bot_events"])
def test_every_subscribed_event_reaches_a_listener(bot: BotUnderTest, event: str) -> None:
    assert bot.event(_sample(event)).status_code == 200  # bolt answers 404 when nothing listens


def test_the_command_and_the_buttons_reach_listeners(bot: BotUnderTest) -> None:
    assert bot.command("help").status_code == 200
    report = {"type": "button", "action_id": "fitcheck_report", "url": "https://x.test/"}
    assert bot.press(report, "1.2").status_code == 200
    unknown = {"type": "button", "action_id": "somebody_elses", "value": "x"}
    assert bot.press(unknown, "1.2").status_code == 404
