"""The GPU types a team has: where a fix may move a job that does not fit.

The default list is data (``service/data/fleet.json``); a deployment replaces it with the
``FITCHECK_FLEET`` setting. A GPU type outside the fleet is never suggested."""

from __future__ import annotations

import json
from functools import cache, lru_cache
from importlib.resources import files

from service.core.errors import InvalidInput
from service.core.hardware.gpus import Gpu, all_gpus


@cache
def default_fleet_ids() -> tuple[str, ...]:
    raw = json.loads(files("service.data").joinpath("fleet.json").read_text(encoding="utf-8"))
    return tuple(raw["gpus"])


@lru_cache(maxsize=16)
def fleet_gpus(ids: tuple[str, ...] | None = None) -> tuple[Gpu, ...]:
    """The catalog records of ``ids`` (the default fleet when None), in catalog order."""
    wanted = default_fleet_ids() if ids is None else ids
    by_id = {g.id: g for g in all_gpus()}
    unknown = [i for i in wanted if i not in by_id]
    if unknown:
        raise InvalidInput("fleet", f"unknown GPU id(s) {', '.join(unknown)}",
                           f"catalog GPU ids: {', '.join(sorted(by_id))}")
    return tuple(g for g in all_gpus() if g.id in set(wanted))
