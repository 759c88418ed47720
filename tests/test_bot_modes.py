"""Socket Mode and HTTP mode wiring, without connecting to Slack: the settings choose the mode,
``fitcheck bot`` runs the right server, a missing token is a clear error, and in Socket Mode the
``/healthz`` server starts and answers while the WebSocket is not connected."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import httpx
import pytest
from bot_fake_slack import fake_slack
from bot_support import APP_TOKEN, SECRET, TOKEN

from bot import run
from bot.app import ConfigError, build_app, open_deps
from bot.settings import BotSettings
from bot.socket_mode import SocketModeRunner


def settings(**values: Any) -> BotSettings:
    return BotSettings(**{"SLACK_BOT_TOKEN": TOKEN, **values})


def test_the_mode_follows_the_settings() -> None:
    assert settings(SLACK_APP_TOKEN=APP_TOKEN).use_socket_mode()
    assert not settings(SLACK_APP_TOKEN=APP_TOKEN).use_socket_mode(force_http=True)
    assert not settings().use_socket_mode()
    assert not settings(SLACK_APP_TOKEN=APP_TOKEN, FITCHECK_BOT_MODE="http").use_socket_mode()
    assert settings(FITCHECK_BOT_MODE="socket").use_socket_mode()


def test_the_environment_names_are_slacks_and_secrets_stay_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {"SLACK_BOT_TOKEN": TOKEN, "SLACK_APP_TOKEN": APP_TOKEN,
                        "SLACK_SIGNING_SECRET": SECRET, "SLACK_API_URL": "http://fake/api/",
                        "FITCHECK_SERVICE_URL": "http://service:8000",
                        "FITCHECK_REDIS_URL": "redis://redis:6379/0"}.items():
        monkeypatch.setenv(name, value)
    loaded = BotSettings()
    assert loaded.slack_api_url == "http://fake/api/" and loaded.service_url == "http://service:8000"
    assert loaded.redis_url == "redis://redis:6379/0"
    for secret in (TOKEN, APP_TOKEN, SECRET):
        assert secret not in repr(loaded) and secret not in str(loaded.model_dump())


@pytest.mark.parametrize(("values", "socket_mode", "missing"), [
    ({"SLACK_BOT_TOKEN": ""}, False, "SLACK_BOT_TOKEN"),
    ({}, False, "SLACK_SIGNING_SECRET"),
    ({}, True, "SLACK_APP_TOKEN"),
])
def test_a_missing_setting_is_named(values: dict[str, str], socket_mode: bool, missing: str) -> None:
    s = settings(**values)
    with pytest.raises(ConfigError, match=missing):
        build_app(s, open_deps(s), socket_mode=socket_mode)


@pytest.mark.parametrize(("argv", "env", "expected"), [
    (["bot"], {"SLACK_APP_TOKEN": APP_TOKEN}, "socket"),
    (["bot", "--http", "--port", "3999"], {"SLACK_APP_TOKEN": APP_TOKEN,
                                           "SLACK_SIGNING_SECRET": SECRET}, "http:3999"),
    (["bot"], {"SLACK_SIGNING_SECRET": SECRET}, "http:3000"),
])
def test_fitcheck_bot_runs_the_server_the_settings_choose(
        monkeypatch: pytest.MonkeyPatch, argv: list[str], env: dict[str, str], expected: str) -> None:
    from service import cli

    for name in ("SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "FITCHECK_BOT_MODE", "FITCHECK_BOT_PORT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SLACK_BOT_TOKEN", TOKEN)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    ran: list[str] = []

    async def socket_run(self: SocketModeRunner, connect: bool = True) -> None:
        ran.append("socket")

    monkeypatch.setattr(SocketModeRunner, "run", socket_run)
    monkeypatch.setattr(run.uvicorn, "run", lambda app, **kw: ran.append(f"http:{kw['port']}"))
    monkeypatch.setattr(run, "setup_logging", lambda *a, **k: None)
    assert cli.main(argv) == 0
    assert ran == [expected]


def test_fitcheck_bot_without_a_token_exits_with_a_message(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from service import cli

    monkeypatch.setenv("SLACK_BOT_TOKEN", "")
    monkeypatch.setattr(run, "setup_logging", lambda *a, **k: None)
    assert cli.main(["bot", "--http"]) == 2
    assert "SLACK_BOT_TOKEN is not set" in capsys.readouterr().err


def test_other_commands_do_not_import_the_bot() -> None:
    import subprocess

    code = ("import sys; from service import cli; cli.build_parser(); "
            "assert not any(m == 'bot' or m.startswith(('bot.', 'slack_bolt')) for m in sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_socket_mode_serves_healthz_without_connecting() -> None:
    with fake_slack() as slack:
        s = settings(SLACK_APP_TOKEN=APP_TOKEN, SLACK_API_URL=slack.api_url,
                     FITCHECK_BOT_HOST="127.0.0.1", FITCHECK_BOT_PORT=0)
        asyncio.run(_healthz_in_socket_mode(s))


async def _healthz_in_socket_mode(s: BotSettings) -> None:
    deps = open_deps(s)
    runner = SocketModeRunner(s, deps, build_app(s, deps, socket_mode=True))
    assert runner.handler.app_token == APP_TOKEN
    assert runner.handler.client.web_client.base_url == s.slack_api_url
    serving = asyncio.create_task(runner.run(connect=False))
    while not runner.server.started:
        assert not serving.done(), serving
        await asyncio.sleep(0.005)
    port = runner.server.servers[0].sockets[0].getsockname()[1]
    async with httpx.AsyncClient() as client:
        health = await client.get(f"http://127.0.0.1:{port}/healthz")
        events = await client.post(f"http://127.0.0.1:{port}/slack/events", content="{}")
    assert health.status_code == 200
    assert health.json() | {"in_flight": 0} == {"status": "ok", "mode": "socket", "dedup": "memory",
                                                "in_flight": 0, "connected": False}
    assert events.status_code in (404, 405)  # Slack's traffic comes over the WebSocket
    runner.stop()
    await serving
