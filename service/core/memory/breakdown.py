"""What an estimate returns: integer bytes per component, each with its formula and source."""

from __future__ import annotations

from dataclasses import dataclass, field

from service.core.compute.training_time import ComputeEstimate

COMPONENT_KEYS: tuple[str, ...] = (
    "weights", "gradients", "optimizer", "activations", "kv_cache", "temporary", "overhead",
)


@dataclass(frozen=True, slots=True)
class Component:
    """One memory component on one GPU."""

    key: str  # one of COMPONENT_KEYS
    bytes: int
    formula: str  # symbolic, e.g. "P_rank x 2 B / zero_shards"
    values: str  # the same with the numbers put in
    source: str  # paper or framework file the rule follows
    note: str = ""


@dataclass(slots=True)
class Estimate:
    """Per-GPU memory of one job, and whether it fits the chosen GPU."""

    model_id: str
    task: str
    params_total: int
    params_active: int
    params_trainable: int
    components: list[Component]
    assumptions: list[str] = field(default_factory=list)
    gpu_id: str | None = None
    gpu_name: str | None = None
    capacity_bytes: int | None = None  # usable memory of one GPU
    cpu_offload_bytes: int = 0  # host memory per GPU that offload moves off the GPU
    extra: dict[str, int | float | str] = field(default_factory=dict)
    compute: ComputeEstimate | None = None
    layout: dict[str, int | str | bool] = field(default_factory=dict)

    def component_bytes(self, key: str) -> int:
        return sum(c.bytes for c in self.components if c.key == key)

    @property
    def per_gpu_bytes(self) -> dict[str, int]:
        out = {key: self.component_bytes(key) for key in COMPONENT_KEYS}
        out["total"] = self.total_bytes
        return out

    @property
    def total_bytes(self) -> int:
        return sum(c.bytes for c in self.components)

    @property
    def fits(self) -> bool | None:
        if self.capacity_bytes is None:
            return None
        return self.total_bytes <= self.capacity_bytes

    @property
    def headroom_bytes(self) -> int | None:
        """Usable memory left over (negative when it does not fit)."""
        if self.capacity_bytes is None:
            return None
        return self.capacity_bytes - self.total_bytes
