"""Service settings, read from ``FITCHECK_*`` environment variables (pydantic-settings)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from service.core.errors import InvalidInput
from service.core.hardware.fleet import fleet_gpus


class Settings(BaseSettings):
    """Every knob of the service; the defaults run it on one machine with no Redis."""

    model_config = SettingsConfigDict(env_prefix="FITCHECK_", extra="ignore")

    host: str = Field("127.0.0.1", description="address `fitcheck serve` binds")
    port: int = Field(8000, ge=1, le=65535, description="port `fitcheck serve` listens on")
    redis_url: str | None = Field(
        None, description="redis://host:port/db; unset: an embedded in-process store (one replica)")
    redis_prefix: str = Field("fitcheck:", description="prefix of every Redis key")
    redis_timeout_s: float = Field(
        0.2, gt=0, le=5, description="Redis connect and socket timeout, seconds")
    redis_retries: int = Field(0, ge=0, le=1, description="Redis retries per command (0 or 1)")
    breaker_cooldown_s: float = Field(
        2.0, gt=0, le=60, description="after a Redis failure, seconds before Redis is tried again")
    cache_ttl_s: int = Field(3600, ge=1, description="lifetime of a cached estimate, seconds")
    memory_cache_entries: int = Field(
        2048, ge=1, description="estimates the embedded store keeps (least recently used go)")
    api_key: str | None = Field(
        None, description="when set, writes (POST /v1/models) need `Authorization: Bearer <key>` "
        "or `X-API-Key: <key>`")
    public_url: str | None = Field(
        None, description="base URL of permalinks (https://fitcheck.example.com); unset: the "
        "URL the request came in on")
    max_body_bytes: int = Field(262_144, ge=1024, description="largest request body accepted")
    log_level: str = Field("INFO", description="log level of the JSON logs")
    workers: int | None = Field(
        None, ge=0, le=256, description="worker processes for the planner and the fits-on "
        "search; unset: one per CPU; 0: none (they run on the event loop)")
    work_queue: int = Field(
        8, ge=0, le=10_000, description="planner jobs that may wait for a worker; one more is "
        "answered 503 with Retry-After")
    worker_kind: Literal["process", "thread"] = Field(
        "process", description="process (the default: isolates the event loop from the "
        "planner's CPU) or thread (the GIL: the loop waits behind the planner)")
    fleet: Annotated[tuple[str, ...] | None, NoDecode] = Field(
        None, description="GPU ids a fix may move a job to, comma-separated "
        "(h100-80gb,a100-80gb); unset: the common NVIDIA datacenter cards of "
        "service/data/fleet.json")

    @field_validator("fleet", mode="before")
    @classmethod
    def _fleet_ids(cls, value: object) -> object:
        if isinstance(value, str):
            value = tuple(part.strip().lower() for part in value.split(",") if part.strip())
        if value is not None:
            try:
                fleet_gpus(tuple(value))  # type: ignore[arg-type]
            except InvalidInput as exc:
                raise ValueError(str(exc)) from exc
        return value
