"""llm-analysis 0.2.2 (PyPI ``llm-analysis``) on the measured jobs.

API called: ``llm_analysis.analysis.LLMAnalysis(ModelConfig, GPUConfig, DtypeConfig,
ParallelismConfig)`` and its ``training(...)`` / ``inference(...)`` summary dicts.

Model: a ``llm_analysis.config.ModelConfig`` built from fitcheck's preset (its Hugging Face path,
``AutoConfig.from_pretrained``, needs the network and reads no FFN width at all): ``num_layers``,
``n_head``, ``hidden_dim``, ``num_key_value_heads``, ``vocab_size``, ``model_type`` = family.
``ffn_embed_dim``: its MLP has two matrices of ``hidden x ffn_embed_dim``, so a gated MLP (three
matrices of ``hidden x ffn``) is given ``1.5 x ffn``, the two-matrix width with the same parameters
(its own bundled Llama-2-7B config uses 16384, about 1.5 x 11008); a plain MLP (GPT-2) its ``ffn``.
``max_seq_len`` = the job's own length (every run is real, so inside the model's window). It has no
head_dim (assumes hidden / heads) and always ties the output embedding to the input one.

Mapping of a measured job:
- GPU: its ``h100-sxm-80gb`` config with ``mem_per_GPU_in_GB`` raised, so that its internal "does it
  fit" asserts never stop the arithmetic; the bench scores every tool's total against the same card.
- data types: ``w16a16e16`` (bf16 weights, activations and embeddings).
- training total: ``(weight+op_state+grad+act)_memory_per_gpu`` of ``training(batch_size_per_gpu=mb,
  gradient_accumulation_steps=1, seq_len=seq, activation_recomputation=FULL if ckpt else NONE,
  ds_zero=NONE, flash_attn = attn is not eager (SDPA keeps no S x S matrix), mlp_gated_linear_units =
  gated MLP)``. Optimizer bytes: bf16_mixed -> ``master_weights_dtype_bytes=4`` (fp32 master weights and
  fp32 gradients) with ``other_op_bytes=8`` (two fp32 Adam moments); pure bf16 -> 2 and 4 (bf16 states);
  adamw_8bit -> ``other_op_bytes=2`` (two 8-bit moments). Fused and foreach AdamW are the same to it.
- LoRA and QLoRA: cannot be expressed (every parameter is trainable in its model): n/a.
- serving total: its inference peak, ``weight_memory_per_gpu + max(prefill_activation_memory_per_gpu,
  kv_cache_memory_per_gpu + decode_activation_memory_per_gpu)`` (the two budgets its own fit check
  tests), from ``inference(batch_size_per_gpu=batch, seq_len=ctx - 16, num_tokens_to_generate=16,
  use_kv_cache=True)``.
"""

from __future__ import annotations

import dataclasses
import logging

from llm_analysis.analysis import ActivationRecomputation, DSZeRO, LLMAnalysis
from llm_analysis.config import (
    ModelConfig,
    ParallelismConfig,
    get_dtype_config_by_name,
    get_gpu_config_by_name,
)
from llm_analysis.logger import logger

from bench.peers_adapters._protocol import Answer, CannotExpress, Job, gated, serve

UNBOUNDED_GB = 1e6  # GPU memory for the arithmetic only: no fit assert may fire


def model_config(job: Job, max_seq_len: int) -> ModelConfig:
    arch = job["model"]["arch"]
    ffn = arch["ffn"] * 1.5 if gated(job) else arch["ffn"]
    return ModelConfig(name=job["model"]["id"], num_layers=arch["layers"], n_head=arch["heads"],
                       hidden_dim=arch["hidden"], vocab_size=arch["vocab"], max_seq_len=max_seq_len,
                       num_key_value_heads=arch.get("kv_heads", arch["heads"]), ffn_embed_dim=ffn,
                       expansion_ratio=ffn / arch["hidden"], model_type=arch.get("family"))


def analysis(job: Job, max_seq_len: int) -> LLMAnalysis:
    gpu = dataclasses.replace(get_gpu_config_by_name("h100-sxm-80gb"), mem_per_GPU_in_GB=UNBOUNDED_GB)
    return LLMAnalysis(model_config(job, max_seq_len), gpu, get_dtype_config_by_name("w16a16e16"),
                       ParallelismConfig())


def optimizer_bytes(job: Job) -> tuple[int, int]:
    """(master_weights_dtype_bytes, other_op_bytes)."""
    master = 4 if job["precision"] == "bf16_mixed" else 2
    if job["optim"] == "adamw_8bit":
        return master, 2
    return master, 2 * master


def train(job: Job) -> Answer:
    if job["method"] != "full":
        raise CannotExpress(f"{job['method']}: no adapter fine-tuning (every parameter trains)")
    master, other = optimizer_bytes(job)
    out = analysis(job, job["seq"]).training(
        batch_size_per_gpu=job["mb"], gradient_accumulation_steps=1, seq_len=job["seq"],
        activation_recomputation=(ActivationRecomputation.FULL if job["ckpt"]
                                  else ActivationRecomputation.NONE),
        ds_zero=DSZeRO.NONE, master_weights_dtype_bytes=master, other_op_bytes=other,
        flash_attn=job["attn"] != "eager", mlp_gated_linear_units=gated(job))
    keys = ("weight_memory_per_gpu", "optimizer_state_memory_per_gpu", "gradient_memory_per_gpu",
            "activation_memory_per_gpu", "num_params_total")
    return {"total_bytes": float(out["(weight+op_state+grad+act)_memory_per_gpu"]), "own_verdict": None,
            "detail": {k: out[k] for k in keys}}


def infer(job: Job) -> Answer:
    decode = int(job["decode_tokens"])
    out = analysis(job, job["ctx"]).inference(
        batch_size_per_gpu=job["batch"], seq_len=job["ctx"] - decode, num_tokens_to_generate=decode,
        use_kv_cache=True)
    weights = out["weight_memory_per_gpu"]
    peak = weights + max(out["prefill_activation_memory_per_gpu"],
                         out["kv_cache_memory_per_gpu"] + out["decode_activation_memory_per_gpu"])
    keys = ("weight_memory_per_gpu", "kv_cache_memory_per_gpu", "prefill_activation_memory_per_gpu",
            "decode_activation_memory_per_gpu")
    return {"total_bytes": float(peak), "own_verdict": None, "detail": {k: out[k] for k in keys}}


def run(job: Job) -> Answer:
    return infer(job) if job["kind"] == "infer" else train(job)


if __name__ == "__main__":
    logger.setLevel(logging.ERROR)
    serve("llm-analysis", run)
