"""Bot settings, from the environment: Slack's own variable names for the tokens, ``FITCHECK_*``
for the rest. Tokens are ``SecretStr`` so no repr or log line shows them."""

from __future__ import annotations

from typing import Literal

from pydantic import AliasChoices, Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

Mode = Literal["auto", "socket", "http"]
Visibility = Literal["in_channel", "ephemeral"]


class BotSettings(BaseSettings):
    """Every knob of the bot. ``mode`` ``auto``: Socket Mode when ``SLACK_APP_TOKEN`` is set,
    else HTTP mode (``fitcheck bot --http`` forces HTTP)."""

    model_config = SettingsConfigDict(extra="ignore", populate_by_name=True)

    bot_token: SecretStr = Field(SecretStr(""), validation_alias="SLACK_BOT_TOKEN",
                                 description="bot token, xoxb-...")
    app_token: SecretStr | None = Field(None, validation_alias="SLACK_APP_TOKEN",
                                        description="app-level token for Socket Mode, xapp-...")
    signing_secret: SecretStr | None = Field(
        None, validation_alias="SLACK_SIGNING_SECRET",
        description="verifies the signature of every request in HTTP mode")
    slack_api_url: str = Field("https://slack.com/api/", validation_alias="SLACK_API_URL",
                               description="base URL of the Slack Web API (tests: a fake)")
    service_url: str = Field("http://127.0.0.1:8000", validation_alias="FITCHECK_SERVICE_URL",
                             description="base URL of the fitcheck service")
    service_timeout_s: float = Field(
        8.0, gt=0, le=60, validation_alias="FITCHECK_BOT_SERVICE_TIMEOUT_S",
        description="longest wait for one service answer, seconds")
    mode: Mode = Field("auto", validation_alias="FITCHECK_BOT_MODE",
                       description="auto | socket | http")
    host: str = Field("0.0.0.0", validation_alias="FITCHECK_BOT_HOST",
                      description="address the HTTP server (/slack/events, /healthz) binds")
    port: int = Field(3000, ge=0, le=65535, validation_alias="FITCHECK_BOT_PORT",
                      description="port of /slack/events (HTTP mode) or /healthz (Socket Mode)")
    redis_url: str | None = Field(
        None, validation_alias=AliasChoices("FITCHECK_BOT_REDIS_URL", "FITCHECK_REDIS_URL"),
        description="Redis for event de-duplication; unset: in memory (one replica)")
    redis_prefix: str = Field("fitcheck-bot:", validation_alias="FITCHECK_BOT_REDIS_PREFIX",
                              description="prefix of the bot's Redis keys")
    dedup_ttl_s: int = Field(3600, ge=60, validation_alias="FITCHECK_BOT_DEDUP_TTL_S",
                             description="how long an event id is remembered, seconds")
    thread_ttl_s: int = Field(7 * 86400, ge=60, validation_alias="FITCHECK_BOT_THREAD_TTL_S",
                              description="how long a thread the bot answered in is followed")
    slash_visibility: Visibility = Field(
        "in_channel", validation_alias="FITCHECK_BOT_SLASH_VISIBILITY",
        description="who sees /fitcheck answers by default (`private`/`public` in the text wins)")
    log_level: str = Field("INFO", validation_alias="FITCHECK_LOG_LEVEL")

    def use_socket_mode(self, force_http: bool = False) -> bool:
        if force_http or self.mode == "http":
            return False
        if self.mode == "socket":
            return True
        return self.app_token is not None and bool(self.app_token.get_secret_value())
