"""Pasted launch configuration: Hugging Face ``TrainingArguments``/axolotl YAML, Megatron-LM
flags, DeepSpeed JSON and accelerate config.

Most keys read like prose and are handled by ``knobs``/``sizes`` (``per_device_train_batch_size``,
``gradient_checkpointing``, ``optim``, ``--tensor-model-parallel-size``, ``"stage": 3``). This
module reads the ones whose value is a word: boolean precision flags (``bf16=True``,
``"fp16": {"enabled": false}``, ``mixed_precision: bf16``), DeepSpeed offload devices, config
file names (``ds_z3.json``), ``adapter: qlora``, and which framework keeps the weights (HF
Trainer without DeepSpeed or FSDP keeps fp32 weights under autocast). Numbers after keys
(``--nproc_per_node 8``, ``micro_batch_size: 2``) are the binder's.
"""

from __future__ import annotations

import re

from service.parser.scan import Scan

_BOOL = r"[\"']?(?P<value>true|false|1|0|auto|yes|no)[\"']?"
_PREC_FLAG = re.compile(rf"(?<![\w])-{{0,2}}[\"']?(?P<key>bf16|fp16|tf32|bf16_full_eval|fp16_full_eval)[\"']?"
                        rf"(?:[ \t]*[=:][ \t]*| +){_BOOL}(?![\w.])")
_PREC_JSON = re.compile(r"[\"'](?P<key>bf16|fp16)[\"']\s*:\s*\{\s*[\"']enabled[\"']\s*:\s*"
                        rf"{_BOOL}[^}}]{{0,200}}\}}")
_OFFLOAD_JSON = re.compile(r"[\"']?offload_(?P<what>optimizer|param)[\"']?\s*:\s*\{\s*[\"']device[\"']\s*:\s*"
                           r"[\"'](?P<device>cpu|nvme|none)[\"'][^}]{0,200}\}")
_DS_FILE = re.compile(r"\b(?:deepspeed|deepspeed_config|ds_config)[\"']?\s*[=:]?\s*[\"']?[\w./\-]*?"
                      r"(?:zero|z|stage)[_\-]?(?P<stage>[0-3])(?![0-9])[\w\-]*\.json")
_MIXED = re.compile(r"\bmixed_precision\s*[=:]\s*[\"']?(?P<value>bf16|fp16|fp8|no)\b")
_ADAPTER = re.compile(r"\badapter\s*[=:]\s*[\"']?(?P<value>q?lora)\b")
_HF_MARKERS = re.compile(r"\b(?:trainingarguments|sftconfig|sfttrainer|per_device_train_batch_size"
                         r"|gradient_accumulation_steps\s*=|optim\s*=|num_train_epochs"
                         # the Trainer named in prose: "with the HF Trainer", "Hugging Face Trainer"
                         r"|(?:hf|hugging\s*face|transformers)\s+trainer)\b")
_MEGATRON_MARKERS = re.compile(r"--(?:tensor-model-parallel-size|num-layers|micro-batch-size|"
                               r"global-batch-size"
                               r"|use-distributed-optimizer|seq-length)\b")
# (accelerate's "--use_deepspeed --zero_stage 2" too)
_SHARDERS = re.compile(r"\b(?:use_)?deepspeed\b|\b(?:use_)?fsdp|\bzero_optimization\b|\bds_config\b"
                       r"|\bzero[\s\-_]*(?:stage[\s\-_]*)?[0-3]\b")
_DS_MARKERS = re.compile(r"[\"']?\b(?:zero_optimization|train_micro_batch_size_per_gpu|offload_optimizer"
                         r"|offload_param|zero_allow_untested_optimizer)\b[\"']?\s*:")
_TRUE = ("true", "1", "auto", "yes")


def find_training_args(scan: Scan) -> None:
    """Add findings for flags whose value matters; mark HF/Megatron pastes."""
    view = scan.view()
    for m in scan.finditer(_PREC_JSON):
        _precision(scan, m)
    for m in scan.finditer(_PREC_FLAG):
        _precision(scan, m)
    for m in scan.finditer(_OFFLOAD_JSON):
        if m.group("device") != "none":
            value = "optimizer" if m.group("what") == "optimizer" else "optimizer_and_params"
            scan.add("offload", value, m.start(), m.end())
        else:
            scan.claim(m.start(), m.end())
    for m in scan.finditer(_DS_FILE):
        scan.add("zero_stage", int(m.group("stage")), m.start(), m.end())
        scan.add("framework", "deepspeed", m.start(), m.end())
    for m in scan.finditer(_MIXED, limit=1):
        value = m.group("value")
        scan.add("precision", "fp32" if value == "no" else value if value == "fp8" else f"{value}_mixed",
                 m.start(), m.end())
    for m in scan.finditer(_ADAPTER, limit=1):
        scan.add("finetune_method", m.group("value"), m.start(), m.end())
    if _DS_MARKERS.search(view):
        scan.add("framework", "deepspeed", note="DeepSpeed config keys: DeepSpeed accounting")
    elif _MEGATRON_MARKERS.search(view):
        scan.add("framework", "megatron", note="Megatron-LM flags: fp32 main gradients")
    elif _HF_MARKERS.search(view) and not _SHARDERS.search(view):
        scan.add("framework", "hf", note="HF Trainer without DeepSpeed/FSDP: fp32 weights under autocast")


def _precision(scan: Scan, m: re.Match[str]) -> None:
    key, on = m.group("key"), m.group("value").lower() in _TRUE
    if on and key in ("bf16", "fp16"):
        scan.add("precision", f"{key}_mixed", m.start(), m.end())
    else:
        scan.claim(m.start(), m.end())
