"""An estimate request as the user gave it (None = not stated), and its checks.

``resolve.py`` turns it into a ``Job`` with every default filled in and written down.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import cache
from operator import attrgetter
from typing import Any

from service.core.errors import InvalidInput

INT_RANGES: dict[str, tuple[int, int]] = {
    "seq_len": (1, 10_000_000),
    "micro_batch": (1, 1_000_000),
    "global_batch": (1, 100_000_000),
    "zero_stage": (0, 3),
    "tp": (1, 1024),
    "pp": (1, 1024),
    "cp": (1, 1024),
    "ep": (1, 4096),
    "lora_rank": (1, 65_536),
    "lora_slots": (1, 1024),
    "batch": (1, 1_000_000),
    "concurrent": (1, 1_000_000),
    "max_num_seqs": (1, 1_000_000),
    "gpu_count": (1, 1_000_000),
    "nodes": (1, 100_000),
    "gpus_per_node": (1, 1024),
    "virtual_stages": (1, 128),
    "shard_group": (1, 1_000_000),
    "cuda_context_bytes": (0, 1 << 40),
}
FLOAT_RANGES: dict[str, tuple[float, float]] = {
    "params_b": (0.0001, 100_000.0),
    "tokens": (1.0, 1e16),
    "mfu": (0.01, 1.0),
    "price_per_gpu_hour": (0.0, 10_000.0),
    "allocator_reserve": (0.0, 1.0),
    "memory_headroom": (0.05, 1.0),
}

TEXT_FIELDS: tuple[str, ...] = (
    "model", "task", "finetune_method", "precision", "optimizer", "framework", "pp_schedule",
    "recompute", "offload", "lora_targets", "quantization", "kv_cache_dtype", "gpu",
    "activation_model", "overhead_model", "method", "objective",
)


@dataclass(frozen=True, slots=True)
class EstimateRequest:
    """Every field optional; names match the REST API (``POST /v1/estimate``)."""

    model: str | None = None
    params_b: float | None = None
    arch: dict[str, Any] | None = None  # our architecture fields, or a pasted HF config.json
    task: str | None = None  # train | finetune | infer
    finetune_method: str | None = None  # full | lora | qlora
    objective: str | None = None  # sft | dpo | ipo | kto | orpo | simpo | cpo (job/objective.py)
    precompute_ref_log_probs: bool | None = None  # TRL: reference log-probs computed before training
    seq_len: int | None = None
    micro_batch: int | None = None
    global_batch: int | None = None
    precision: str | None = None
    optimizer: str | None = None
    framework: str | None = None
    zero_stage: int | None = None
    shard_group: int | None = None
    tp: int | None = None
    pp: int | None = None
    cp: int | None = None
    ep: int | None = None
    sequence_parallel: bool | None = None
    pp_schedule: str | None = None
    virtual_stages: int | None = None
    recompute: str | None = None
    flash_attn: bool | None = None
    chunked_loss: bool | None = None  # a fused linear-cross-entropy kernel: no full logits
    offload: str | None = None
    lora_rank: int | None = None
    lora_targets: str | None = None
    lora_slots: int | None = None  # serving: LoRA adapters held at once (vLLM --max-loras)
    quantization: str | None = None
    kv_cache_dtype: str | None = None
    batch: int | None = None
    concurrent: int | None = None
    max_num_seqs: int | None = None  # serving: the engine's cap (vLLM --max-num-seqs), not a need
    gpu: str | None = None
    gpu_count: int | None = None
    nodes: int | None = None
    gpus_per_node: int | None = None
    tokens: float | None = None
    mfu: float | None = None
    price_per_gpu_hour: float | None = None
    activation_model: str | None = None
    overhead_model: str | None = None
    cuda_context_bytes: int | None = None
    allocator_reserve: float | None = None
    memory_headroom: float | None = None  # planner: share of usable memory a layout may use
    method: str | None = None  # planner: "planner" (default) or "seed_even_split" (the S3 seed)

    def __post_init__(self) -> None:
        check_ranges(self)

    def stated(self) -> dict[str, Any]:
        """The fields the user gave, in declaration order."""
        names = _field_names()
        return {name: value for name, value in zip(names, _field_values()(self), strict=True)
                if value is not None}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EstimateRequest:
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise InvalidInput(unknown[0], "is not a request field", ", ".join(sorted(known)))
        return cls(**data)


@cache
def _field_names() -> tuple[str, ...]:
    return tuple(f.name for f in fields(EstimateRequest))


@cache
def _field_values() -> attrgetter[tuple[Any, ...]]:
    return attrgetter(*_field_names())


@cache
def request_fields() -> frozenset[str]:
    """The names of every request field."""
    return frozenset(f.name for f in fields(EstimateRequest))


def check_ranges(request: EstimateRequest) -> None:
    """Reject numbers no real job has, naming the field and the accepted range."""
    for name, (low, high) in INT_RANGES.items():
        value = getattr(request, name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int):
            raise InvalidInput(name, f"must be a whole number, got {value!r}", f"{low}..{high:,}")
        if not low <= value <= high:
            raise InvalidInput(name, f"{value:,} is out of range", f"an integer {low}..{high:,}")
    for name, (flow, fhigh) in FLOAT_RANGES.items():
        value = getattr(request, name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
            raise InvalidInput(name, f"must be a number, got {value!r}", f"{flow:g}..{fhigh:g}")
        if not flow <= value <= fhigh:
            raise InvalidInput(name, f"{value:g} is out of range", f"a number {flow:g}..{fhigh:g}")
    for name in ("sequence_parallel", "flash_attn", "chunked_loss"):
        value = getattr(request, name)
        if value is not None and not isinstance(value, bool):
            raise InvalidInput(name, f"must be true or false, got {value!r}", "true or false")
    for name in TEXT_FIELDS:
        value = getattr(request, name)
        if value is not None and not isinstance(value, str):
            raise InvalidInput(name, f"must be text, got {value!r}", "a name, as text")
    if request.arch is not None and not isinstance(request.arch, dict):
        raise InvalidInput("arch", "must be an object", "architecture fields or an HF config.json")
