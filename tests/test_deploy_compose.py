"""docker-compose.yml, checked offline: against the compose-spec JSON schema (the copy that
check-jsonschema ships, ``check_jsonschema/builtin_schemas/vendor/compose-spec.json``), before
and after variable interpolation, then for what the deployment needs (start order, health,
persistence, the image, hardening)."""

from __future__ import annotations

import copy
import importlib.resources
import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = ROOT / "docker-compose.yml"
_VAR = re.compile(r"\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?::?(?P<op>[-?])(?P<default>[^}]*))?\}")


def compose_schema() -> dict[str, Any]:
    ref = importlib.resources.files("check_jsonschema.builtin_schemas.vendor") / \
        "compose-spec.json"
    schema: dict[str, Any] = json.loads(ref.read_text(encoding="utf-8"))
    return schema


def interpolate(value: Any, env: dict[str, str]) -> Any:
    """Compose's ``${VAR}``, ``${VAR:-default}`` and ``${VAR:?message}``, recursively."""
    if isinstance(value, dict):
        return {k: interpolate(v, env) for k, v in value.items()}
    if isinstance(value, list):
        return [interpolate(v, env) for v in value]
    if not isinstance(value, str):
        return value

    def one(match: re.Match[str]) -> str:
        name, op, default = match["name"], match["op"], match["default"]
        if env.get(name):
            return env[name]
        if op == "?":
            raise KeyError(f"{name}: {default}")
        return default or ""

    return _VAR.sub(one, value)


@pytest.fixture(scope="module")
def raw() -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load(COMPOSE.read_text())
    return document


@pytest.fixture(scope="module")
def compose(raw: dict[str, Any]) -> dict[str, Any]:
    resolved: dict[str, Any] = interpolate(raw, {})
    return resolved


def _errors(document: dict[str, Any]) -> list[str]:
    schema = compose_schema()
    validator = jsonschema.validators.validator_for(schema)(schema)
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
            for e in validator.iter_errors(document)]


def test_the_compose_file_is_valid_against_the_compose_spec(raw: dict[str, Any],
                                                            compose: dict[str, Any]) -> None:
    assert _errors(raw) == []
    assert _errors(compose) == []
    env = {"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_APP_TOKEN": "xapp-1", "FITCHECK_TAG": "0.1.0",
           "FITCHECK_PUBLISHED_PORT": "8080"}
    assert _errors(interpolate(raw, env)) == []


def test_the_validator_catches_mistakes(compose: dict[str, Any]) -> None:
    typo = copy.deepcopy(compose)
    typo["services"]["service"]["healtcheck"] = typo["services"]["service"].pop("healthcheck")
    assert _errors(typo)
    wrong_type = copy.deepcopy(compose)
    wrong_type["services"]["redis"]["depends_on"] = {"service": {"condition": "healthy"}}
    assert _errors(wrong_type)


def test_three_services_start_in_order_on_health(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert {"redis", "service", "bot"} <= set(services)
    for name, spec in services.items():
        assert spec.get("healthcheck", {}).get("test"), f"{name} has no healthcheck"
        test = " ".join(spec["healthcheck"]["test"])
        assert "curl" not in test and "wget" not in test
        for dependency, condition in spec.get("depends_on", {}).items():
            assert dependency in services
            assert condition["condition"] == "service_healthy"
    assert services["service"]["depends_on"] == {"redis": {"condition": "service_healthy"}}
    assert set(services["bot"]["depends_on"]) == {"redis", "service"}
    assert "127.0.0.1:3000/healthz" in services["bot"]["healthcheck"]["test"][-1]
    assert services["bot"].get("profiles") is None  # `docker compose up` starts the bot


def test_redis_persists_registered_models(compose: dict[str, Any]) -> None:
    redis = compose["services"]["redis"]
    command = redis["command"]
    assert command[command.index("--appendonly") + 1] == "yes"
    assert command[command.index("--maxmemory-policy") + 1].startswith("volatile-")
    volume, _, target = redis["volumes"][0].partition(":")
    assert target == "/data" and volume in compose["volumes"]  # a named volume survives `down`
    assert redis["image"].startswith("redis:") and redis["image"] != "redis:latest"


def test_service_and_bot_run_the_image_built_from_the_dockerfile(
        compose: dict[str, Any]) -> None:
    services = compose["services"]
    images = set()
    for name in ("service", "bot", "bot-http"):
        spec = services[name]
        assert spec["build"]["dockerfile"] == "deploy/Dockerfile"
        assert (ROOT / spec["build"]["context"] / spec["build"]["dockerfile"]).exists()
        images.add(spec["image"])
        assert spec["read_only"] is True and spec["cap_drop"] == ["ALL"]
        assert "no-new-privileges:true" in spec["security_opt"]
        assert "/tmp" in spec["tmpfs"]
        assert "user" not in spec  # the image's non-root user
    assert len(images) == 1
    assert services["service"]["command"] == ["serve"]
    assert services["bot"]["command"] == ["bot"]
    assert services["bot-http"]["command"][:2] == ["bot", "--http"]
    assert services["bot-http"]["profiles"] == ["http"]


def test_the_service_finds_redis_and_the_bot_finds_the_service(
        compose: dict[str, Any]) -> None:
    services = compose["services"]
    env = services["service"]["environment"]
    assert env["FITCHECK_REDIS_URL"].startswith("redis://redis:6379/")
    assert env["FITCHECK_PUBLIC_URL"] == "http://localhost:8000"
    assert services["service"]["ports"] == ["8000:8000"]
    bot = services["bot"]["environment"]
    assert bot["FITCHECK_SERVICE_URL"] == "http://service:8000"
    assert bot["FITCHECK_REDIS_URL"] == env["FITCHECK_REDIS_URL"]  # shared de-duplication
    for token in ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET"):
        assert token in bot and bot[token] == ""  # from .env; never committed


def test_the_env_example_names_every_variable_the_compose_file_reads(raw: dict[str, Any]) -> None:
    used = set(_VAR.findall(COMPOSE.read_text()))
    names = {name for name, _, _ in used}
    example = (ROOT / "deploy" / "env.example").read_text()
    for name in names:
        assert re.search(rf"^#? ?{name}=", example, re.M), f"{name} missing in deploy/env.example"
