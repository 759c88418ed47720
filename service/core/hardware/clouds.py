"""The big clouds' GPU instances: which instance types hold a number of a catalog GPU.

Data, with sources, in ``service/data/clouds.json``: for each cloud, each GPU's instance sizes by
GPUs per instance. A job that needs n GPUs takes the smallest size that holds n, else whole
instances of the largest (16 H100s on AWS: 2x p5.48xlarge).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any


@dataclass(frozen=True, slots=True)
class Instances:
    """How a job's GPUs are rented on one cloud."""

    name: str  # "g6e.12xlarge"
    count: int  # instances
    gpus_each: int
    usd_per_hour: float | None = None  # the cloud's own price of one instance, where recorded

    @property
    def gpus(self) -> int:
        return self.count * self.gpus_each

    @property
    def on_demand_usd_per_hour(self) -> float | None:
        """The whole instances' price an hour on the cloud (None where no price is recorded)."""
        return self.usd_per_hour * self.count if self.usd_per_hour is not None else None

    def describe(self) -> str:
        return f"{self.count}x {self.name}" if self.count > 1 else self.name


@cache
def _raw_clouds() -> dict[str, dict[str, Any]]:
    raw = json.loads(files("service.data").joinpath("clouds.json").read_text(encoding="utf-8"))
    clouds: dict[str, dict[str, Any]] = raw["clouds"]
    return clouds


@cache
def _clouds() -> dict[str, tuple[str, dict[str, dict[int, str]]]]:
    return {cloud: (entry["name"], {item["gpu"]: {int(n): size for n, size in item["sizes"].items()}
                                    for item in entry["instances"]})
            for cloud, entry in _raw_clouds().items()}


@cache
def _prices() -> dict[str, dict[str, float]]:
    return {cloud: dict(entry.get("on_demand_usd_per_hour", {}))
            for cloud, entry in _raw_clouds().items()}


def cloud_ids() -> tuple[str, ...]:
    return tuple(_clouds())


def cloud_name(cloud: str) -> str:
    return _clouds()[cloud][0]


def instance_price(name: str) -> tuple[str, float] | None:
    """(the cloud's name, its on-demand price of one instance an hour) for an instance named
    as the cloud writes it ("p5.48xlarge"), where ``clouds.json`` records one."""
    for cloud, prices in _prices().items():
        if name in prices:
            return cloud_name(cloud), prices[name]
    return None


def instances_for(cloud: str, gpu_id: str, gpus: int) -> Instances | None:
    """The instances that hold ``gpus`` of the GPU on the cloud (None where it has none)."""
    sizes = _clouds()[cloud][1].get(gpu_id)
    if not sizes:
        return None
    prices = _prices()[cloud]
    fitting = [n for n in sorted(sizes) if n >= gpus]
    each = fitting[0] if fitting else max(sizes)
    return Instances(sizes[each], 1 if fitting else -(-gpus // each), each,
                     prices.get(sizes[each]))
