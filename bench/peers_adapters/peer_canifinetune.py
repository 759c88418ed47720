"""canifinetune 0.4.1 (PyPI ``canifinetune``, the latest release when this bench was written) on the
measured jobs.

API called: ``canifinetune.estimator.estimate(EstimateRequest)`` -> ``Estimate`` (``memory``,
``feasible``), with no calibration.

Model: its documented ``override`` spec (no network, ``use_network=False``) from fitcheck's preset:
``family`` (qwen2, llama, mistral, gemma2, phi3, gpt2: it picks SwiGLU vs classic MLP and the LoRA
module names from it), ``hidden_size``, ``num_hidden_layers``, ``num_attention_heads``,
``num_key_value_heads``, ``intermediate_size``, ``vocab_size``, ``tie_word_embeddings`` and
``total_params`` = the published parameter count (what it reads from the Hub's safetensors metadata).

Mapping of a measured job:
- GPU: ``gpu_vram_gb`` = the card's capacity in GiB (79.2 for the H100 80GB).
- ``method`` full | lora | qlora; ``seq_len`` = seq; ``micro_batch_size`` = mb;
  ``gradient_checkpointing`` = ckpt; ``attention_implementation`` = attn (sdpa | eager).
- ``base_dtype``: LoRA / QLoRA -> ``bf16`` (bf16 base, Trainer ``bf16=True``: exactly its runtime);
  full training, pure bf16 -> ``bf16`` (bf16 weights and states); full training, bf16_mixed -> ``fp32``:
  the parameters, gradients and AdamW states are fp32, and it has no fp32-weights-with-bf16-autocast
  setting (it ties the activation dtype to ``base_dtype``), so activations are counted at fp32 too.
- ``optimizer``: adamw_fused -> ``adamw_torch_fused``; adamw_foreach -> ``adamw_torch`` (it adds a
  foreach workspace); adamw_8bit -> ``adamw_8bit``.
- LoRA: ``lora_rank`` = rank, ``lora_alpha`` = 2 x rank, ``lora_target_scope`` = targets (all_linear |
  attention). QLoRA: ``quantization="nf4_double_quant"``.
- Total: ``total_estimated_gb - safety_margin_gb`` (GiB): the safety margin is a buffer it adds so as
  not to recommend the brink, not memory the job uses (its ``measurement_target`` says the margin is
  reported separately); its CUDA / fragmentation overhead term stays in.
- Serving: cannot be expressed (it estimates fine-tuning only): n/a.
"""

from __future__ import annotations

from typing import Any

from canifinetune.estimator import EstimateRequest, estimate

from bench.peers_adapters._protocol import Answer, CannotExpress, Job, serve

GIB = 1024**3
OPTIMIZERS = {"adamw_fused": "adamw_torch_fused", "adamw_foreach": "adamw_torch", "adamw_8bit": "adamw_8bit"}


def override(job: Job) -> dict[str, Any]:
    arch = job["model"]["arch"]
    return {"family": arch.get("family", "llama"), "hidden_size": arch["hidden"],
            "num_hidden_layers": arch["layers"], "num_attention_heads": arch["heads"],
            "num_key_value_heads": arch.get("kv_heads", arch["heads"]), "intermediate_size": arch["ffn"],
            "vocab_size": arch["vocab"], "tie_word_embeddings": bool(arch.get("tied_embeddings", False)),
            "total_params": int(job["model"]["params"])}


def request(job: Job) -> EstimateRequest:
    method = job["method"]
    full_mixed = method == "full" and job["precision"] == "bf16_mixed"
    return EstimateRequest(
        model_id=job["model"]["hf_repo"], method=method, seq_len=job["seq"], micro_batch_size=job["mb"],
        base_dtype="fp32" if full_mixed else "bf16",
        quantization="nf4_double_quant" if method == "qlora" else "none",
        lora_rank=job["rank"], lora_alpha=2 * job["rank"], lora_target_scope=job["targets"],
        optimizer=OPTIMIZERS[job["optim"]], gradient_checkpointing=bool(job["ckpt"]),
        attention_implementation=job["attn"], gpu_vram_gb=job["gpu"]["total_bytes"] / GIB,
        override=override(job), use_network=False)


def run(job: Job) -> Answer:
    if job["kind"] == "infer":
        raise CannotExpress("serving: it estimates fine-tuning only")
    result = estimate(request(job))
    memory = result.memory
    return {"total_bytes": (memory.total_estimated_gb - memory.safety_margin_gb) * GIB,
            "own_verdict": result.feasible, "detail": memory.model_dump()}


if __name__ == "__main__":
    serve("canifinetune", run)
