"""fitcheck-llm 0.3.1 (PyPI ``fitcheck-llm``, imported as ``fitcheck``) on the measured jobs.

API called: ``fitcheck.fetch_model_config(hf_id)`` -> ``ModelConfig``; ``fitcheck.estimate(model,
TrainingConfig, gpu)`` -> ``MemoryReport`` (``total_mib``, ``verdict``); ``fitcheck.estimate_inference(
model, ServingConfig, gpu)`` -> ``InferenceReport`` (``total_mib``, ``fits``).

Model, offline: ``fetch_model_config`` downloads config.json with ``huggingface_hub.hf_hub_download``
and asks ``HfApi.model_info`` for the Hub's safetensors parameter count. Inside ``fitcheck.config_parser``
the adapter swaps those two names for stand-ins answered from fitcheck's preset: a config.json written
from the preset's architecture with the field names the model's published config.json uses (GPT-2:
``n_embd``/``n_layer``/``n_head``; the others: ``hidden_size``/``num_hidden_layers``/...,
``head_dim``, ``tie_word_embeddings``, ``model_type``), and the preset's published parameter count.
The peer's own parsing, MoE / multimodal refusals and 2% parameter-count check run unchanged.

Mapping of a measured job:
- GPU: its ``h100`` preset (H100 80GB). The bench scores every tool's total against the same card.
- training: ``batch_size`` = micro batch, ``seq_len`` = seq, ``grad_checkpoint`` = ckpt,
  ``flash_attn`` = attn is not eager (SDPA on an H100 runs the flash / memory-efficient kernel, which
  keeps no S x S matrix), ``grad_accum_steps`` 1.
- precision: ``bf16`` for bf16_mixed and for pure bf16 (it is the compute dtype; for full training the
  peer adds fp32 master weights on its own, which is the bf16_mixed recipe; it has no setting for full
  training without master weights). ``optimizer_dtype`` ``fp32`` for bf16_mixed and for LoRA / QLoRA
  adapters, ``bf16`` for pure-bf16 runs (bf16 AdamW states).
- optimizer: adamw_fused and adamw_foreach -> ``adamw``; adamw_8bit -> ``adam8bit``.
- method: full -> ``lora_rank=None``; lora -> ``lora_rank`` = rank, targets all_linear -> q/k/v/o/gate/
  up/down_proj, attention -> q/k/v/o_proj (for Phi-3's fused qkv / gate_up modules the same matrices
  under the Llama names); qlora -> the same plus ``quantization="nf4"``, ``double_quant=True`` (the runs
  use bitsandbytes double quantization).
- serving: ``ServingConfig(precision="bf16", seq_len=ctx, num_concurrent=batch)``: ctx counts the prompt
  and the 16 generated tokens, each of the batch's sequences holding its own cache.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from fitcheck import (
    ServingConfig,
    TrainingConfig,
    config_parser,
    estimate,
    estimate_inference,
    fetch_model_config,
    get_gpu,
)
from fitcheck.memory.lora import LORA_TARGETS_FULL, LORA_TARGETS_STANDARD

from bench.peers_adapters._protocol import Answer, Job, serve

MIB = 1024**2
TARGETS = {"all_linear": list(LORA_TARGETS_FULL), "attention": list(LORA_TARGETS_STANDARD)}
OPTIMIZERS = {"adamw_fused": "adamw", "adamw_foreach": "adamw", "adamw_8bit": "adam8bit"}


def hf_config(model: dict[str, Any]) -> dict[str, Any]:
    """The model's config.json as published, from the preset's architecture."""
    arch = model["arch"]
    if arch.get("family") == "gpt2":
        return {"model_type": "gpt2", "n_embd": arch["hidden"], "n_layer": arch["layers"],
                "n_head": arch["heads"], "n_inner": None, "vocab_size": arch["vocab"],
                "n_positions": arch.get("max_positions", 1024), "tie_word_embeddings": True}
    return {"model_type": arch.get("family", "llama"), "hidden_size": arch["hidden"],
            "num_hidden_layers": arch["layers"], "num_attention_heads": arch["heads"],
            "num_key_value_heads": arch.get("kv_heads", arch["heads"]),
            "intermediate_size": arch["ffn"], "vocab_size": arch["vocab"],
            "head_dim": arch.get("head_dim", arch["hidden"] // arch["heads"]),
            "tie_word_embeddings": bool(arch.get("tied_embeddings", False))}


@contextlib.contextmanager
def offline_hub(model: dict[str, Any]) -> Iterator[None]:
    """``hf_hub_download`` and ``HfApi`` as ``fitcheck.config_parser`` sees them, answered locally."""
    saved = config_parser.hf_hub_download, config_parser.HfApi
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "config.json"
        path.write_text(json.dumps(hf_config(model)))
        info = SimpleNamespace(safetensors=SimpleNamespace(total=int(model["params"])))
        config_parser.hf_hub_download = lambda repo_id, filename, token=None: str(path)
        config_parser.HfApi = lambda token=None: SimpleNamespace(
            model_info=lambda repo_id, expand=None: info)
        try:
            yield
        finally:
            config_parser.hf_hub_download, config_parser.HfApi = saved


def training_config(job: Job) -> TrainingConfig:
    method = job["method"]
    adapters = method in ("lora", "qlora")
    return TrainingConfig(
        precision="bf16",
        quantization="nf4" if method == "qlora" else "none",
        double_quant=method == "qlora",
        optimizer=OPTIMIZERS[job["optim"]],
        optimizer_dtype="fp32" if adapters or job["precision"] == "bf16_mixed" else "bf16",
        batch_size=job["mb"],
        seq_len=job["seq"],
        lora_rank=job["rank"] if adapters else None,
        lora_targets=TARGETS[job["targets"]],
        grad_checkpoint=bool(job["ckpt"]),
        flash_attn=job["attn"] != "eager",
    )


def run(job: Job) -> Answer:
    with offline_hub(job["model"]):
        model = fetch_model_config(job["model"]["hf_repo"])
    gpu = get_gpu("h100")
    if job["kind"] == "infer":
        report = estimate_inference(model, ServingConfig(
            precision="bf16", seq_len=job["ctx"], num_concurrent=job["batch"]), gpu)
        verdict = "fits" if report.fits else "does_not_fit"
        parts = {"weights": report.weight_mib, "kv_cache": report.kv_cache_mib,
                 "overhead": report.overhead_mib}
    else:
        report = estimate(model, training_config(job), gpu)
        verdict = report.verdict
        parts = {"weights": report.weight_mib, "lora": report.lora_mib, "optimizer": report.optimizer_mib,
                 "gradients": report.gradient_mib, "activations": report.activation_mib,
                 "overhead": report.overhead_mib}
    return {"total_bytes": report.total_mib * MIB, "own_verdict": verdict,
            "detail": {"params": model.num_params, **{k: v * MIB for k, v in parts.items()}}}


if __name__ == "__main__":
    serve("fitcheck-llm", run)
