"""What the planner returns: a layout, its per-GPU estimate, why it won, and what else was tried.

Plain immutable data: the planner builds it once; the report turns it into text and JSON.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from service.core.compute.time_cost import TimeAndCost
from service.core.hardware.gpus import Gpu
from service.core.job.assumptions import Assumption
from service.core.memory.breakdown import Estimate


@dataclass(frozen=True, slots=True)
class Layout:
    """One physically valid way to run a training job: dp x tp x pp x cp = gpus."""

    gpus: int
    nodes: int
    dp: int
    tp: int
    pp: int
    cp: int
    ep: int
    zero_stage: int
    sequence_parallel: bool
    recompute: str
    micro_batch: int
    grad_accum: int
    global_batch: int
    offload: str
    # the planner looks a layout up in several tables many times: hashed once
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((
            self.gpus, self.dp, self.tp, self.pp, self.cp, self.ep, self.zero_stage,
            self.sequence_parallel, self.recompute, self.micro_batch, self.grad_accum,
            self.global_batch, self.offload)))

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self) -> tuple[Any, ...]:
        # rebuilt by the constructor: another process hashes strings differently
        return (Layout, tuple(getattr(self, f.name) for f in fields(self) if f.init))

    def describe(self) -> str:
        """'ZeRO-3 + full recompute, micro-batch 1 x 32 accumulation' (the knobs people set)."""
        parts: list[str] = []
        if self.dp > 1 or (self.cp > 1 and self.zero_stage):  # ZeRO shards over dp x cp
            parts.append(f"ZeRO-{self.zero_stage}" if self.zero_stage else "plain DDP")
        for name, value in (("TP", self.tp), ("PP", self.pp), ("CP", self.cp), ("EP", self.ep)):
            if value > 1:
                parts.append(f"{name}={value}")
        if self.recompute != "none":
            parts.append(f"{self.recompute} recompute")
        if self.offload != "none":
            parts.append("CPU offload of " + self.offload.replace("_", " "))
        head = " + ".join(parts) if parts else ("one GPU" if self.gpus == 1 else "a single replica")
        accum = f" x {self.grad_accum} accumulation" if self.grad_accum > 1 else ""
        return f"{head}, micro-batch {self.micro_batch}{accum}"

    def shape(self) -> str:
        """'dp=4 tp=2 pp=1 cp=1' for tables."""
        text = f"dp={self.dp} tp={self.tp} pp={self.pp} cp={self.cp}"
        return text + (f" ep={self.ep}" if self.ep > 1 else "")


@dataclass(frozen=True, slots=True)
class Candidate:
    """A layout with its per-GPU total (bytes) and relative step time (1.0 = ideal)."""

    layout: Layout
    total_bytes: int
    step_time: float
    step_terms: tuple[tuple[str, float], ...] = ()  # ("full recompute", 1.333), ...

    def slowdowns(self) -> str:
        """'full recompute +33%, TP=2 +4%' (terms above 0.5%)."""
        parts = [f"{name} +{(factor - 1) * 100:.0f}%" for name, factor in self.step_terms
                 if factor > 1.005]
        return ", ".join(parts) if parts else "no slowdown terms"


@dataclass(frozen=True, slots=True)
class Alternative:
    """Another layout and why it was not chosen."""

    description: str
    gpus: int
    total_bytes: int | None
    step_time: float | None
    reason: str


def hourly_price(gpu: Gpu, count: int) -> str:
    """What ``count`` GPUs of ``gpu`` cost per hour at the catalog's price, in words."""
    if gpu.price_per_gpu_hour_usd is None:
        return "no catalog price"
    return f"~${gpu.price_per_gpu_hour_usd * count:,.2f}/h at catalog prices"


SHOWN_FIXES = 3  # an answer shows the fix and the next best two


@dataclass(frozen=True, slots=True)
class Fix:
    """A change that makes the job fit: what to change, what it costs (``note``: step time,
    quality or money), and the request fields that make it (``changes``)."""

    change: str
    gpus: int
    gpu_id: str
    total_bytes: int | None
    note: str
    kind: str = "knob"  # knob (same GPUs) | serving (same GPUs) | more_gpus | other_gpu
    changes: dict[str, str | int | float | bool] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SeedCount:
    """The S3 seed's even-split GPU count for one configuration, and why it cannot run."""

    label: str
    gpus: int | None
    reasons: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class FitsOnRow:
    """One GPU type in the fits-on table."""

    gpu_id: str
    gpu_name: str
    gpus: int | None
    nodes: int | None
    layout: str
    total_bytes: int | None
    budget_bytes: int
    price_per_hour: float | None  # for all the GPUs together, USD


@dataclass(frozen=True, slots=True)
class ServingFit:
    """Per-GPU figures of one serving layout: ``replicas`` engines of tp x pp GPUs, each
    serving its share of the sequences (``per_replica``)."""

    tp: int
    pp: int
    gpus: int
    nodes: int
    weights_bytes: int
    kv_per_sequence_bytes: int  # this GPU's share of one sequence at the context length
    workspace_bytes: int
    fixed_bytes: int  # besides the weights, what does not grow with the sequences
    kv_budget_bytes: int
    max_concurrent: int
    sequences: int
    context: int
    memory_fraction: float  # the share of usable memory the server may fill
    total_bytes: int  # per GPU with the requested sequences
    replicas: int = 1  # data-parallel engines (vLLM --data-parallel-size)
    expert_parallel: bool = False  # the replicas are attention ranks sharing EP experts

    @property
    def fits(self) -> bool:
        return self.max_concurrent >= self.sequences

    @property
    def per_replica(self) -> int:
        """The sequences each replica serves (the per-GPU figures are for these)."""
        return -(-self.sequences // self.replicas)

    def shape(self) -> str:
        """'TP=8', 'TP=2, PP=3', '2 replicas of TP=8', 'DP=8 attention + EP=8'."""
        if self.expert_parallel:
            each = f" (TP={self.tp} each)" if self.tp > 1 else ""
            return f"DP={self.replicas} attention{each} + EP={self.replicas}"
        one = f"TP={self.tp}" + (f", PP={self.pp}" if self.pp > 1 else "")
        return one if self.replicas == 1 else f"{self.replicas} replicas of {one}"


@dataclass(frozen=True, slots=True)
class Plan:
    """The planner's answer for one GPU type (training, fine-tuning or serving).

    ``mode``: ``fewest`` (the planner chose the count), ``given`` (the user gave it) or
    ``catalog`` (no GPU type: the fits-on table alone)."""

    task: str
    model_id: str
    gpu: Gpu | None
    capacity_bytes: int  # usable memory of one GPU
    budget_bytes: int  # capacity x headroom: what a layout may use
    headroom: float
    mode: str
    fits: bool
    gpus_per_node: int = 8
    gpus: int | None = None  # the count the layout runs on (None: nothing fits)
    min_gpus: int | None = None  # fewest GPUs of this type that fit (None: none up to the cap)
    min_shape: str | None = None  # serving: how those fewest GPUs are split ("TP=4", "TP=1, PP=5")
    layout: Layout | None = None
    step_time: float | None = None
    step_terms: tuple[tuple[str, float], ...] = ()  # what makes the chosen layout's step slower
    estimate: Estimate | None = None  # per-GPU breakdown of the chosen layout
    why: tuple[str, ...] = ()
    alternatives: tuple[Alternative, ...] = ()
    shortfall_bytes: int | None = None  # given GPUs that do not fit: over the budget per GPU
    fix: Fix | None = None
    other_fixes: tuple[Fix, ...] = ()
    seed_counts: tuple[SeedCount, ...] = ()
    compute: TimeAndCost | None = None
    fits_on: tuple[FitsOnRow, ...] = ()
    serving: ServingFit | None = None
    stack: str = ""  # the software the layout is for (stacks.py)
    assumptions: tuple[Assumption, ...] = ()

    @property
    def gpu_id(self) -> str:
        return self.gpu.id if self.gpu else ""

    @property
    def gpu_name(self) -> str:
        return self.gpu.name if self.gpu else ""
