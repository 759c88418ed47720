"""Assumption records in words: a label per setting and its value formatted for people."""

from __future__ import annotations

from service.core.compute.time_cost import MFU_SPREAD
from service.core.job.assumptions import Assumption, Value
from service.core.job.model_notes import CAVEAT_FIELD

LABELS: dict[str, str] = {
    "model": "model", "params_b": "size", "task": "task", "finetune_method": "method",
    "objective": "objective", "objective.sequences": "sequences per sample",
    "context_limit": "model's context limit (tokens)",
    "objective.reference": "reference model",
    "seq_len": "sequence length", "micro_batch": "micro-batch", "global_batch": "global batch",
    "precision": "precision", "optimizer": "optimizer", "framework": "framework",
    "zero_stage": "ZeRO stage", "shard_group": "HSDP shard group", "tp": "tensor parallel",
    "pp": "pipeline parallel", "cp": "context parallel", "ep": "expert parallel",
    "sequence_parallel": "sequence parallel", "pp_schedule": "pipeline schedule",
    "virtual_stages": "virtual stages", "recompute": "recompute", "flash_attn": "FlashAttention",
    "chunked_loss": "chunked loss",
    "precompute_ref_log_probs": "precomputed reference log-probs",
    "offload": "CPU offload", "lora_rank": "LoRA rank", "lora_targets": "LoRA on",
    "lora_slots": "LoRA adapter slots",
    "quantization": "weights", "kv_cache_dtype": "KV cache", "batch": "sequences",
    "concurrent": "concurrent sequences", "max_num_seqs": "engine cap on sequences",
    "gpu": "GPU", "gpu_count": "GPUs", "nodes": "nodes",
    "gpus_per_node": "GPUs per node", "tokens": "training tokens", "mfu": "MFU",
    "price_per_gpu_hour": "price per GPU-hour", "activation_model": "activation profile",
    "overhead_model": "overhead", "cuda_context_bytes": "CUDA context",
    "allocator_reserve": "allocator reserve", "memory_headroom": "memory budget",
    "method": "planner method", "plan.ranking": "layout ranking", "plan.layout": "layout",
    "plan.kv_cache": "KV cache sizing", "plan.tensor_parallel": "tensor parallel",
    "plan.fp8_mfu": "MFU of the FP8 peak",
    "weights_dtype": "weights loaded as",
    "qlora.experts": "QLoRA routed experts", "lora.experts": "routed experts under LoRA",
    "qlora.other_params": "QLoRA embeddings, LM head and norms",
}
CAVEAT_LABEL = "not modelled exactly:"  # fields model.caveat.<topic> (core/job/model_notes.py)
_SHORT: dict[str, str] = {"seq_len": "seq", "micro_batch": "micro-batch", "zero_stage": "ZeRO",
                          "quantization": "weights", "kv_cache_dtype": "KV",
                          "concurrent": "sequences", "gpu_count": "GPUs"}
_VALUE_WORDS: dict[tuple[str, Value], str] = {
    ("precision", "bf16_mixed"): "bf16 mixed (fp32 master weights)",
    ("precision", "fp16_mixed"): "fp16 mixed (fp32 master weights)",
    ("quantization", "none"): "16-bit", ("quantization", "bf16"): "bf16",
    ("kv_cache_dtype", "auto"): "16-bit", ("lora_targets", "all_linear"): "all linear layers",
    ("lora_targets", "attention"): "attention (q, k, v, o)", ("zero_stage", 0): "0 (plain DDP)",
    ("optimizer", "adamw"): "AdamW", ("recompute", "full"): "full (gradient checkpointing)",
    ("objective", "sft"): "language modelling (SFT)", ("objective", "dpo"): "DPO",
    ("objective", "ipo"): "IPO", ("objective", "kto"): "KTO", ("objective", "orpo"): "ORPO",
    ("objective", "simpo"): "SimPO", ("objective", "cpo"): "CPO",
}


def label(field: str) -> str:
    if field.startswith(CAVEAT_FIELD + "."):
        return CAVEAT_LABEL
    return LABELS.get(field, field.replace("_", " "))


def human_tokens(count: float) -> str:
    """'1T tokens', '2.5B tokens', '300M tokens': how token budgets are written."""
    for size, word in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if count >= size:
            return f"{count / size:.3g}{word} tokens"
    return f"{count:,.0f} tokens"


def value_text(field: str, value: Value) -> str:
    """A setting's value as people write it: 4,096 tokens, 40%, $2.50, on/off."""
    words = _VALUE_WORDS.get((field, value))
    if words is not None:
        return words
    if isinstance(value, bool):
        return "on" if value else "off"
    if field in ("mfu", "memory_headroom", "allocator_reserve") and isinstance(value, float):
        return f"{value:.0%}"
    if field == "plan.fp8_mfu" and isinstance(value, float):
        return f"{value:.1%}"
    if field == "price_per_gpu_hour" and isinstance(value, int | float):
        return f"${value:,.2f}"
    if field == "seq_len" and isinstance(value, int):
        return f"{value:,} tokens"
    if field == "tokens" and isinstance(value, int | float):
        return human_tokens(float(value))
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:g}"
    return value


def assumption_line(a: Assumption) -> str:
    """'sequence length 4,096 tokens (default: a common training and serving length)'."""
    head = f"{label(a.field)} {value_text(a.field, a.value)}"
    if a.origin == "stated":
        return f"{head} (stated)"
    return f"{head} ({a.origin}: {a.why})" if a.why else f"{head} ({a.origin})"


def short_assumption(a: Assumption) -> str:
    """'seq 4,096 tokens' for a chat line."""
    name = _SHORT.get(a.field, label(a.field))
    return f"{name} {value_text(a.field, a.value)}"


def mfu_range(low: str, high: str) -> str:
    """A time or GPU-hours range at the default MFU's spread (``MFU_SPREAD``), said as such."""
    return f"{low}-{high} at the default MFU ±{MFU_SPREAD:.0%}"
