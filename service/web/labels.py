"""Words for people: a label per layout setting and per accepted choice value, never a Python
literal (True, None) or a raw field name (zero_stage)."""

from __future__ import annotations

from service.core.model.formats import QUANT_BITS
from service.render.assumption_text import label, value_text

LAYOUT_LABELS: dict[str, str] = {
    "gpus": "GPUs", "nodes": "nodes", "dp": "data parallel", "tp": "tensor parallel",
    "pp": "pipeline parallel", "cp": "context parallel", "ep": "expert parallel",
    "zero_stage": "ZeRO stage", "sequence_parallel": "sequence parallel",
    "recompute": "activation recompute", "micro_batch": "micro-batch",
    "grad_accum": "gradient accumulation", "global_batch": "global batch",
    "offload": "CPU offload", "context": "context", "sequences": "sequences served",
    "max_concurrent_sequences": "room for (sequences)",
}
_LAYOUT_VALUES: dict[tuple[str, object], str] = {
    ("zero_stage", 0): "off (plain data parallel)", ("zero_stage", 1): "1 (optimizer sharded)",
    ("zero_stage", 2): "2 (optimizer, gradients)", ("zero_stage", 3): "3 (all model states)",
    ("recompute", "none"): "none", ("recompute", "selective"): "selective (attention)",
    ("recompute", "full"): "full (every layer)", ("offload", "none"): "none",
    ("offload", "optimizer"): "optimizer to CPU",
    ("offload", "optimizer_and_params"): "optimizer and weights to CPU",
    ("grad_accum", 1): "none",
}

CHOICE_LABELS: dict[str, dict[str, str]] = {
    "task": {"train": "Training (pretraining)", "finetune": "Fine-tuning",
             "infer": "Serving (inference)"},
    "finetune_method": {"full": "Full fine-tune", "lora": "LoRA",
                        "qlora": "QLoRA (4-bit base)"},
    "objective": {"sft": "Language modelling (SFT, pretraining)",
                  "dpo": "DPO (pairs + reference model)", "ipo": "IPO (pairs + reference model)",
                  "kto": "KTO (reference model)", "orpo": "ORPO (pairs)", "simpo": "SimPO (pairs)",
                  "cpo": "CPO (pairs)"},
    "precision": {"fp32": "fp32", "bf16_mixed": "bf16 mixed (fp32 master weights)",
                  "fp16_mixed": "fp16 mixed (fp32 master weights)", "bf16": "pure bf16",
                  "fp16": "pure fp16", "fp8": "fp8 (Transformer Engine)"},
    "kv_cache_dtype": {"auto": "16-bit (as the weights)", "bf16": "bf16", "fp16": "fp16",
                       "fp32": "fp32", "fp8": "fp8", "int8": "int8", "int4": "int4"},
    "recompute": {"none": "none", "selective": "selective (attention)",
                  "full": "full (gradient checkpointing)"},
    "quantization": {"none": "none (16-bit)", "bf16": "bf16", "fp16": "fp16", "fp32": "fp32",
                     "fp8": "fp8", "fp8-block": "fp8, block-scaled",
                     "fp8-ffn": "fp8, feed-forward layers only", "int8": "int8",
                     "int4": "int4", "gptq": "GPTQ 4-bit", "awq": "AWQ 4-bit",
                     "gptq-8bit": "GPTQ 8-bit", "nf4": "NF4 (bitsandbytes 4-bit)",
                     "mxfp4": "MXFP4"},
}


def layout_value(field: str, value: object) -> str:
    """One layout setting's value in words: 'on', 'none', '3 (all model states)', '32,768'."""
    words = _LAYOUT_VALUES.get((field, value))
    if words is not None:
        return words
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "on" if value else "off"
    if field == "context" and isinstance(value, int):
        return f"{value:,} tokens"
    if isinstance(value, int | float | str):
        return value_text(field, value)
    return str(value)


def layout_label(field: str) -> str:
    return LAYOUT_LABELS.get(field) or label(field)


def choice_label(field: str, value: str) -> str:
    """The words for an accepted value: 'AWQ 4-bit', 'gguf q4_k_m (4.85 bits per weight)'."""
    known = CHOICE_LABELS.get(field, {}).get(value)
    if known is not None:
        return known
    if field == "quantization" and value in QUANT_BITS:
        return f"{value.replace('-', ' ')} ({QUANT_BITS[value]:g} bits per weight)"
    return value.replace("_", " ")
