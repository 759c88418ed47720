"""The answer to one request as plain immutable data, shaped exactly as the API's JSON.

Every front end renders from this: the JSON body (the service serialises it as it is), the HTML
report, the Slack reply and the command line. Bytes are integers; GB (10^9) and GiB (2^30) are
formatting.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from service.core.job.assumptions import Assumption
from service.core.launch.launch_types import LaunchConfig

Number = int | float
UNITS = "bytes; GB = 10^9 bytes, GiB = 2^30 bytes"


@dataclass(frozen=True, slots=True)
class PerGpuBytes:
    weights: int
    gradients: int
    optimizer: int
    activations: int
    kv_cache: int
    temporary: int
    overhead: int
    total: int


@dataclass(frozen=True, slots=True)
class FormulaEntry:
    """One component: ``expression`` evaluated with ``terms`` gives ``bytes``; ``values`` is the
    expression with the terms' numbers put in, rendered from the same terms."""

    component: str
    expression: str
    terms: dict[str, Number]
    bytes: int
    source: str
    values: str
    note: str = ""


@dataclass(frozen=True, slots=True)
class LayoutEntry:
    """Where a job runs: the GPUs and how they are split; serving layouts also carry their
    context, sequences and the concurrency their KV budget holds."""

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
    global_batch: int | None
    offload: str
    context: int | None = None
    sequences: int | None = None
    max_concurrent_sequences: int | None = None


@dataclass(frozen=True, slots=True)
class ComputeEntry:
    flops_per_token: float
    total_flops: float
    seconds: float
    days: float
    gpu_hours: float
    cost_usd: float | None
    compute_optimal_tokens: float
    formula: str
    gpus: int
    # with the default MFU: the days at that MFU x (1 + spread) and x (1 - spread); null when
    # the MFU was stated
    days_range: list[float] | None = None


@dataclass(frozen=True, slots=True)
class ServingCostEntry:
    """What serving on the planned GPUs costs: GPUs x price per GPU-hour (stated, or the
    catalog's on-demand price), per hour and per month of HOURS_PER_MONTH hours."""

    gpus: int
    price_per_gpu_hour_usd: float
    price_stated: bool
    per_hour_usd: float
    per_month_usd: float
    hours_per_month: float


@dataclass(frozen=True, slots=True)
class FixEntry:
    """A change that makes the job fit, and what it costs (``note``: step time, quality or
    money); ``changes``: the request fields that make it."""

    change: str
    gpus: int
    gpu: str
    per_gpu_total: int | None
    note: str
    kind: str  # knob (same GPUs) | serving (same GPUs) | more_gpus | other_gpu
    changes: dict[str, str | int | float | bool]


@dataclass(frozen=True, slots=True)
class AlternativeEntry:
    layout: str
    gpus: int
    per_gpu_total: int | None
    relative_step_time: float | None
    reason: str


@dataclass(frozen=True, slots=True)
class SeedCountEntry:
    label: str
    gpus: int | None
    physically_valid: bool
    reasons: list[str]


@dataclass(frozen=True, slots=True)
class FitsOnEntry:
    gpu: str
    name: str
    gpus: int | None
    nodes: int | None
    layout: str
    per_gpu_total: int | None
    budget_bytes: int
    price_per_hour_usd: float | None


@dataclass(frozen=True, slots=True)
class ErrorBandEntry:
    """Where the real peak of the verdict's layout is likely to be: ``low_bytes``..
    ``high_bytes`` holds the measured peak of about 9 jobs in 10 of this kind; ``verdict``
    compares the band with the GPU's usable memory (null without a GPU)."""

    low_bytes: int
    high_bytes: int
    verdict: str | None  # fits | borderline | does_not_fit
    kind: str  # the kind of job whose measured errors make the band
    runs: int  # measured runs of that kind (0: a stated band)
    gpu: str  # where they were measured
    basis: str


@dataclass(frozen=True, slots=True)
class LayoutFigures:
    """Another layout of the same job (as stated, or the planner's), with its own figures."""

    label: str
    plan: LayoutEntry
    per_gpu_bytes: PerGpuBytes
    fits: bool | None
    formulas: list[FormulaEntry]


@dataclass(frozen=True, slots=True)
class PlannerEntry:
    """The planner's answer on the job's GPU type: what it chose and why."""

    mode: str  # fewest | given
    fits: bool
    verdict: str
    gpus: int | None
    min_gpus: int | None
    budget_bytes: int
    headroom: float
    layout: LayoutFigures | None
    relative_step_time: float | None
    step_terms: dict[str, float]  # what slows the chosen layout's step (factor over ideal)
    why: list[str]
    alternatives: list[AlternativeEntry]
    shortfall_bytes: int | None
    fix: FixEntry | None
    other_fixes: list[FixEntry]
    seed_counts: list[SeedCountEntry]
    stack: str  # the software the layout is for (a framework id), "" when none
    stack_name: str


@dataclass(frozen=True, slots=True)
class Answer:
    """The whole answer. Which layout the top-level figures describe:

    - no GPU: the request as stated;
    - a GPU, no count: the planner's fewest-GPUs layout (the request's own under ``as_stated``);
    - a GPU and a count, training with no layout knob stated: the planner's best layout on that
      count (fitcheck's default layout under ``as_stated``), as the verdict is;
    - a GPU and a count otherwise (a stated layout, or serving): the request as stated on that
      count, the planner's best layout for that count under ``planner``.
    """

    model: str
    model_name: str
    task: str
    params_total: int
    params_active: int
    params_trainable: int
    gpu: str | None
    gpu_name: str | None
    gpu_usable_bytes: int | None
    per_gpu_bytes: PerGpuBytes
    fits: bool | None
    headroom_bytes: int | None
    error_band: ErrorBandEntry
    verdict: str
    min_gpus: int | None
    plan: LayoutEntry
    peak_phase: str  # the phase of the step (or of serving) whose memory the figures are
    cpu_offload_bytes: int
    formulas: list[FormulaEntry]
    assumptions: list[Assumption]
    details: dict[str, Number]
    compute: ComputeEntry | None
    compute_6nd: ComputeEntry | None
    as_stated: LayoutFigures | None = None
    planner: PlannerEntry | None = None
    fits_on: list[FitsOnEntry] = field(default_factory=list)
    launch: dict[str, LaunchConfig] = field(default_factory=dict)  # tool -> config
    serving_cost: ServingCostEntry | None = None
    units: str = UNITS
    link: str | None = None  # its permalink, set where the URL is known
