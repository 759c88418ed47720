"""What a memory estimate is: one job's per-GPU components, each a formula with its bytes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from service.core.job.spec import Job
from service.core.memory.formula import Component

COMPONENT_KEYS: tuple[str, ...] = (
    "weights", "gradients", "optimizer", "activations", "kv_cache", "temporary", "overhead",
)


@dataclass(frozen=True, slots=True)
class Estimate:
    """Per-GPU memory of one job on its layout, and whether it fits the job's GPU.

    ``details``: named figures behind the components (bytes per sequence of KV cache, the KV
    budget, micro-batches in flight, ...).
    """

    job: Job
    components: tuple[Component, ...]
    params_total: int
    params_active: int
    params_trainable: int
    cpu_offload_bytes: int = 0  # host memory per GPU that offload moves off the GPU
    details: Mapping[str, int | float] = field(default_factory=dict)
    peak_phase: str = ""  # the phase of the step (or of serving) whose memory these are

    @property
    def model_id(self) -> str:
        return self.job.model_id

    @property
    def task(self) -> str:
        return self.job.task

    def component_bytes(self, key: str) -> int:
        return sum(c.bytes for c in self.components if c.key == key)

    @property
    def per_gpu_bytes(self) -> dict[str, int]:
        out = dict.fromkeys(COMPONENT_KEYS, 0)
        total = 0
        for c in self.components:
            total += c.bytes
            if c.key in out:
                out[c.key] += c.bytes
        out["total"] = total
        return out

    @property
    def total_bytes(self) -> int:
        return sum(c.bytes for c in self.components)

    @property
    def capacity_bytes(self) -> int | None:
        """Usable memory of one GPU (None: no GPU named)."""
        return self.job.gpu.memory_bytes_usable if self.job.gpu else None

    @property
    def fits(self) -> bool | None:
        capacity = self.capacity_bytes
        return None if capacity is None else self.total_bytes <= capacity

    @property
    def headroom_bytes(self) -> int | None:
        """Usable memory left over (negative when it does not fit)."""
        capacity = self.capacity_bytes
        return None if capacity is None else capacity - self.total_bytes
