"""The last kind of fix, for training and serving alike: moving the job to another GPU type the
team has (``fleet``), in no more nodes than the fix on the same GPU type takes, cheapest per
hour first."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from service.core.hardware.gpus import Gpu
from service.core.planning.layouts import node_count
from service.core.planning.plan_types import Fix, hourly_price


@dataclass(frozen=True, slots=True)
class FleetFit:
    """The fewest GPUs of one other type that hold the job, and how they are laid out."""

    gpus: int
    per_node: int
    shape: str  # the layout in words
    total_bytes: int | None


def fleet_moves(gpu: Gpu, fleet: tuple[Gpu, ...], gpus: int,
                fit_on: Callable[[Gpu], FleetFit | None]) -> list[Fix]:
    """A fix per other fleet GPU type on which ``fit_on`` finds the job a place in no more
    nodes than ``gpus`` of ``gpu`` take (one node at least), cheapest per hour first."""
    nodes = max(1, node_count(gpus, gpu.gpus_per_node))
    found: list[tuple[float, Fix]] = []
    for other in fleet:
        if other.id == gpu.id:
            continue
        fit = fit_on(other)
        if fit is None or node_count(fit.gpus, fit.per_node) > nodes:
            continue
        price = (other.price_per_gpu_hour_usd or float("inf")) * fit.gpus
        found.append((price, Fix(f"{fit.gpus}x {other.name} ({fit.shape})", fit.gpus, other.id,
                                 fit.total_bytes, hourly_price(other, fit.gpus), "other_gpu",
                                 {"gpu": other.id, "gpu_count": fit.gpus})))
    return [fix for _, fix in sorted(found, key=lambda t: t[0])]
