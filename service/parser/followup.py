"""Thread follow-ups: the new message's fields over the previous request, changing only what the
new message names ("what about seq 8192?", "and with zero-2?", "r=128 instead?").

Some fields move together: a new model replaces the size and architecture too; a new task drops
the knobs of the old one (serving has no optimizer; full training has no LoRA rank); a new GPU
count drops a stale node count; switching from QLoRA to LoRA drops the 4-bit base.
"""

from __future__ import annotations

import re
from dataclasses import fields
from typing import Any

from service.core.job.request import EstimateRequest
from service.core.model.presets import lookup_preset

REQUEST_FIELDS = frozenset(f.name for f in fields(EstimateRequest))
MODEL_GROUP = ("model", "params_b", "arch")
TRAIN_ONLY = ("zero_stage", "optimizer", "micro_batch", "global_batch", "recompute", "offload",
              "finetune_method", "lora_rank", "lora_targets", "framework", "tokens", "mfu",
              "precision", "shard_group", "price_per_gpu_hour")
SERVE_ONLY = ("concurrent", "batch", "kv_cache_dtype", "max_num_seqs")
LORA_ONLY = ("lora_rank", "lora_targets")
_MAX_TEXT = 200
_SIZE_IN_ID = re.compile(r"(?<![\d.])\d+(?:\.\d+)?b\b")  # "llama-3.1-8b", "mixtral-8x7b"


def sanitize(previous: object) -> dict[str, Any]:
    """Only request fields with plain values survive from a client-sent ``previous``."""
    if not isinstance(previous, dict):
        return {}
    out: dict[str, Any] = {}
    for key, value in previous.items():
        if key not in REQUEST_FIELDS or value is None:
            continue
        if isinstance(value, str):
            out[key] = value[:_MAX_TEXT]
        elif isinstance(value, bool | int | float) or (key == "arch" and isinstance(value, dict)):
            out[key] = value
    return out


def merge(previous: dict[str, Any], new: dict[str, Any], how_many: bool) -> dict[str, Any]:
    """``new`` over ``previous`` with the rules in the module docstring."""
    merged = dict(previous)
    if any(k in new for k in MODEL_GROUP):
        for k in MODEL_GROUP:
            merged.pop(k, None)
    if how_many or ("gpu_count" in new and "nodes" not in new):
        merged.pop("nodes", None)
    if how_many and "gpu_count" not in new:  # "how many gpus then?": the count is the question
        merged.pop("gpu_count", None)
    if "nodes" in new and "gpu_count" not in new:
        merged.pop("gpu_count", None)
    if "gpu" in new and new["gpu"] != previous.get("gpu") and "price_per_gpu_hour" not in new:
        # "$2.20/gpu-hr" was that GPU's rate: another type is priced at its own (the catalog's)
        merged.pop("price_per_gpu_hour", None)
        merged.pop("gpus_per_node", None)  # an instance's node size goes with its GPU
    task, old_task = new.get("task"), previous.get("task")
    if task and task != old_task:
        drop = {"infer": TRAIN_ONLY, "train": ("finetune_method", *LORA_ONLY, *SERVE_ONLY),
                "finetune": SERVE_ONLY}.get(task, ())
        for k in drop:
            if k not in new:
                merged.pop(k, None)
        # QLoRA's NF4 base is not a serving format, and full training has no 4-bit base
        if task in ("train", "infer") and previous.get("quantization") == "nf4" \
                and "quantization" not in new:
            merged.pop("quantization", None)
    method = new.get("finetune_method")
    if method in ("lora", "full") and previous.get("quantization") == "nf4" \
            and "quantization" not in new:
        merged.pop("quantization", None)
    if method == "full":
        for k in LORA_ONLY:
            if k not in new:
                merged.pop(k, None)
    if method in ("lora", "qlora") and previous.get("finetune_method", "full") == "full":
        # sharding and offload chosen for full fine-tuning's states are not an adapter's: "and
        # qlora on one gpu?" after "zero-3 + cpu offload" had kept both (and their slowdown)
        for k in FULL_STATE_KNOBS:
            if k not in new:
                merged.pop(k, None)
    if new.get("gpu_count") == 1 and "nodes" not in new:
        for k in MULTI_GPU_KNOBS:  # one GPU: no model or data parallelism to keep
            if k not in new:
                merged.pop(k, None)
    merged.update(new)
    return merged


FULL_STATE_KNOBS = ("zero_stage", "offload", "framework")
MULTI_GPU_KNOBS = ("tp", "pp", "cp", "ep", "zero_stage", "shard_group", "sequence_parallel",
                   "gpus_per_node")


RESTATED = 0.1  # "phi-4 (14b)": a size within 10% of a model's published count (14.7B) names it


def restates(model_id: object, params_b: object) -> bool:
    """Whether a bare size describes the named model rather than a second one: "phi-4 (14b)",
    "Llama-3.3-70B-Instruct ... will 70b fit". The size in the model's id when it has one
    ("qwen2.5-7b vs 8b" compares), else within RESTATED of its published parameter count."""
    if not isinstance(model_id, str) or not isinstance(params_b, int | float):
        return False
    size = _SIZE_IN_ID.search(model_id)
    if size is not None and "x" not in model_id[max(0, size.start() - 2):size.start()]:
        return float(size.group()[:-1]) == params_b
    preset = lookup_preset(model_id)
    if preset is None:
        return False
    published = preset.published_params / 1e9
    return abs(params_b - published) <= RESTATED * published


_EXPERTS_SIZE = re.compile(r"(?<![\w.])(\d+)\s*x\s*(\d+(?:\.\d+)?)\s*b\b")  # "8x22b"


def same_family_experts(previous_model: object, low: str) -> tuple[str, str] | None:
    """"what about 8x22b" in a thread about mixtral-8x7b: the family's model of those experts,
    and the words that named it."""
    found = _EXPERTS_SIZE.search(low)
    if not isinstance(previous_model, str) or found is None:
        return None
    own = _EXPERTS_SIZE.search(previous_model)
    if own is None:
        return None
    sibling = _sibling(previous_model, own, f"{found.group(1)}x{found.group(2)}b")
    return (sibling, found.group(0)) if sibling is not None else None


def same_family(previous_model: object, params_b: float) -> str | None:
    """"what about the 405b?" in a thread about llama-3.1-8b: the preset of the same family and
    version in that size (llama-3.1-405b), when there is one."""
    if not isinstance(previous_model, str):
        return None
    size = _SIZE_IN_ID.search(previous_model)
    if size is None:
        return None
    return _sibling(previous_model, size, f"{params_b:g}b")


def _sibling(previous_model: str, size: re.Match[str], other: str) -> str | None:
    """The preset named as ``previous_model`` with its size written ``other``, if another."""
    found = lookup_preset(previous_model[:size.start()] + other + previous_model[size.end():])
    return found.id if found is not None and found.id != previous_model else None
