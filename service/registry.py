"""Models the service knows: built-in presets (computed once, served from memory) and the models
teams register (kept in the store, mirrored in this process so that a replica that has seen a
model can still use it while Redis is down)."""

from __future__ import annotations

import json
import time
from functools import cache
from typing import Any

from service.core.errors import InvalidInput, UnknownName
from service.core.model.architecture import Architecture
from service.core.model.hf_config import looks_like_hf_config
from service.core.model.lookup import BARE_SIZE, resolve_model
from service.core.model.params import active_parameter_count, parameter_count
from service.core.model.presets import ModelPreset, all_presets, lookup_preset, name_key, suggestions
from service.store.base import Store, StoreUnavailable

IDS_TTL_S = 5.0  # how stale another replica's list of registered ids may be in chat


class Conflict(Exception):
    """The id is taken (a built-in model, or a registered model with another architecture)."""


def preset_summary(preset: ModelPreset, full: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": preset.id, "name": preset.name, "source": "preset", "family": preset.family,
        "hf_repo": preset.hf_repo, "aliases": list(preset.aliases),
        "params_total": parameter_count(preset.arch),
        "params_active": active_parameter_count(preset.arch),
        "published_params": preset.published_params,
    }
    if full:
        out["params_source"] = preset.params_source
        out["arch"] = preset.arch.to_dict()
    return out


@cache
def preset_summaries() -> tuple[dict[str, Any], ...]:
    """Every built-in preset's summary, computed once per process."""
    return tuple(preset_summary(p) for p in all_presets())


def registered_summary(document: dict[str, Any], full: bool = False) -> dict[str, Any]:
    keys = ("id", "name", "source", "description", "arch_format", "params_total",
            "params_active", "registered_at")
    out = {k: document.get(k) for k in keys}
    out.update({"family": "registered", "hf_repo": None, "aliases": [],
                "published_params": None})
    if full:
        out["arch"] = document["arch"]
    return out


def build_document(model_id: str, arch: dict[str, Any], name: str | None,
                   description: str | None) -> dict[str, Any]:
    """Validate an architecture (ours or a config.json) with the engine; raises InvalidInput."""
    preset = lookup_preset(model_id)
    if preset is not None:
        raise Conflict(f"{model_id!r} names the built-in model {preset.id!r}")
    if BARE_SIZE.match(model_id):
        raise InvalidInput("id", f"{model_id!r} reads as a bare size",
                           "an id that is not only a size, e.g. team-llm-7b")
    resolved = resolve_model(None, None, arch)
    normal = resolved.arch.with_changes(name=model_id).to_dict()
    Architecture.from_dict(normal)  # round trip: what is stored must load again
    return {
        "id": model_id, "name": name or model_id, "description": description or "",
        "source": "registered",
        "arch_format": "hf_config" if looks_like_hf_config(arch) else "fields",
        "arch": normal, "params_total": parameter_count(resolved.arch),
        "params_active": active_parameter_count(resolved.arch),
        "registered_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


class Registry:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.mirror: dict[str, dict[str, Any]] = {}
        self._ids_at = float("-inf")

    async def register(self, document: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        """Store a new model; (document, True) when created, (existing, False) when the same
        architecture was registered under this id before. Conflict when it differs."""
        existing = await self.store.add_model(document["id"], json.dumps(document))
        if existing is None:
            self.mirror[document["id"]] = document
            return document, True
        old = json.loads(existing)
        self.mirror[old["id"]] = old
        if old.get("arch") != document["arch"]:
            raise Conflict(f"{document['id']!r} is registered with another architecture "
                           f"(on {old.get('registered_at')}); ids are permanent: pick a new one")
        return old, False

    async def get(self, model_id: str) -> dict[str, Any] | None:
        """A registered model by id (case-insensitive); the mirror answers while the store is
        down, and StoreUnavailable is raised only when the mirror does not know it either."""
        key = model_id.strip().lower()
        try:
            raw = await self.store.get_model(key)
        except StoreUnavailable:
            if key in self.mirror:
                return self.mirror[key]
            raise
        if raw is None:
            return None
        document: dict[str, Any] = json.loads(raw)
        self.mirror[key] = document
        return document

    async def all(self) -> tuple[list[dict[str, Any]], bool]:
        """Registered models and whether the store answered (else: this process's mirror)."""
        try:
            found = await self.store.list_models()
        except StoreUnavailable:
            return sorted(self.mirror.values(), key=lambda d: str(d["id"])), False
        documents = [json.loads(v) for _, v in sorted(found.items())]
        self.mirror.update({d["id"]: d for d in documents})
        return documents, True

    async def ids(self) -> tuple[str, ...]:
        """Registered model ids, refreshed from the store at most every ``IDS_TTL_S`` seconds
        (a model registered on this replica is known at once)."""
        now = time.monotonic()
        if now - self._ids_at > IDS_TTL_S:
            self._ids_at = now
            await self.all()
        return tuple(self.mirror)

    def suggest(self, name: str) -> list[str]:
        """Closest preset ids, then mirrored registered ids that share the name's key."""
        key = name_key(name)
        local = [i for i in self.mirror if key and (key in name_key(i) or name_key(i) in key)]
        return (local + suggestions(name))[:3]

    def unknown(self, name: str) -> UnknownName:
        return UnknownName("model", name, self.suggest(name))
