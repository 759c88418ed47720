"""The bot's typed view of the service's answers agrees with the service's OpenAPI document:
every field the bot reads exists there, with a type the bot accepts, and is always present
when the bot requires it."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from bot.answer_view import (
    AnswerView,
    AskView,
    LayoutFiguresView,
    LayoutView,
    PerGpuView,
    PlannerView,
)
from service.app import create_app

PAIRS: list[tuple[type[BaseModel], str]] = [
    (AskView, "AskAnswer"), (AnswerView, "Answer"), (PlannerView, "PlannerEntry"),
    (LayoutFiguresView, "LayoutFigures"), (LayoutView, "LayoutEntry"),
    (PerGpuView, "PerGpuBytes"),
]
SCHEMAS: dict[str, Any] = create_app().openapi()["components"]["schemas"]
VIEW_NAMES = {view.__name__: service for view, service in PAIRS}


def kinds(prop: dict[str, Any], names: dict[str, str]) -> set[str]:
    """The JSON types a property may take: 'integer', 'null', 'ref:Answer', ..."""
    if "anyOf" in prop:
        return set().union(*(kinds(p, names) for p in prop["anyOf"]))
    if "$ref" in prop:
        name = prop["$ref"].rsplit("/", 1)[-1]
        return {f"ref:{names.get(name, name)}"}
    kind = prop.get("type")
    if kind is None:
        return {"any"}
    return {"number" if kind == "integer" else kind} if kind == "integer" else {kind}


@pytest.mark.parametrize(("view", "component"), PAIRS, ids=[c for _, c in PAIRS])
def test_every_field_the_bot_reads_is_in_the_service_schema(view: type[BaseModel],
                                                            component: str) -> None:
    service = SCHEMAS[component]
    mine = view.model_json_schema()
    required = set(service.get("required", []))
    for name, prop in mine["properties"].items():
        assert name in service["properties"], f"{component} has no {name!r}"
        theirs = kinds(service["properties"][name], {})
        accepted = kinds(prop, VIEW_NAMES)
        if "any" not in accepted:
            assert theirs <= accepted | {"any"}, (component, name, theirs, accepted)
        if name in mine.get("required", []):
            assert name in required, f"the bot requires {component}.{name}, which may be absent"
