"""The operator's view stays true: every setting of the service and the bot is in the README's
"Every setting" table, and every variable the deployment files set is a real setting."""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import AliasChoices

from bot.settings import BotSettings
from service.settings import Settings

ROOT = Path(__file__).resolve().parents[1]


def service_variables() -> set[str]:
    prefix = str(Settings.model_config.get("env_prefix", ""))
    return {prefix + name.upper() for name in Settings.model_fields}


def bot_variables() -> set[str]:
    names: set[str] = set()
    for field in BotSettings.model_fields.values():
        alias = field.validation_alias
        if isinstance(alias, str):
            names.add(alias)
        elif isinstance(alias, AliasChoices):
            names.update(str(choice) for choice in alias.choices)
    return names


def readme_table() -> str:
    text = (ROOT / "README.md").read_text()
    start = text.index("### Every setting")
    return text[start:text.index("\n### ", start + 1)]


def test_every_setting_is_in_the_readme_table() -> None:
    table = readme_table()
    missing = sorted(v for v in service_variables() | bot_variables() if f"`{v}`" not in table)
    assert missing == [], f"add to README's 'Every setting': {missing}"


def test_the_deployment_sets_only_real_settings() -> None:
    known = service_variables() | bot_variables()
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    for name, spec in compose["services"].items():
        for variable in spec.get("environment", {}):
            assert variable in known, f"docker-compose.yml {name}: {variable} is no setting"
    for path in (ROOT / "deploy" / "k8s").rglob("kustomization.yaml"):
        for generator in yaml.safe_load(path.read_text()).get("configMapGenerator", []):
            for literal in generator.get("literals", []):
                variable = literal.split("=", 1)[0]
                assert variable in known, f"{path.relative_to(ROOT)}: {variable} is no setting"
    for path in (ROOT / "deploy" / "k8s").rglob("*.yaml"):
        for doc in yaml.safe_load_all(path.read_text()):
            if not doc or doc.get("kind") != "Deployment":
                continue
            for container in doc["spec"]["template"]["spec"]["containers"]:
                for env in container.get("env", []):
                    assert env["name"] in known, f"{path.relative_to(ROOT)}: {env['name']}"
    example = (ROOT / "deploy" / "k8s" / "overlays" / "prod" / "slack.env.example").read_text()
    for line in example.splitlines():
        if line and not line.startswith("#"):
            assert line.split("=", 1)[0] in known
