"""Every request field of ``POST /v1/estimate``: its description, an example and its accepted
values. The pydantic models in ``estimate.py`` are generated from this table and from the core's
``EstimateRequest``, so the API and the engine can never disagree about the fields."""

from __future__ import annotations

from typing import Any

from service.core.job.choices import (
    ACTIVATION_MODELS,
    FRAMEWORKS,
    LORA_TARGETS,
    OBJECTIVES,
    OFFLOADS,
    OPTIMIZERS,
    OVERHEAD_MODELS,
    PIPELINE_SCHEDULES,
    PLANNER_METHODS,
    PRECISIONS,
    RECOMPUTE,
    TASKS,
)
from service.core.model.formats import KV_DTYPE_BYTES, QUANT_BITS

CHOICES: dict[str, tuple[str, ...]] = {
    "task": TASKS,
    "finetune_method": ("full", "lora", "qlora"),
    "precision": PRECISIONS,
    "optimizer": OPTIMIZERS,
    "framework": FRAMEWORKS,
    "pp_schedule": PIPELINE_SCHEDULES,
    "recompute": RECOMPUTE,
    "offload": OFFLOADS,
    "lora_targets": LORA_TARGETS,
    "quantization": tuple(QUANT_BITS),
    "kv_cache_dtype": tuple(KV_DTYPE_BYTES),
    "activation_model": ACTIVATION_MODELS,
    "overhead_model": OVERHEAD_MODELS,
    "method": PLANNER_METHODS,
    "objective": OBJECTIVES,
}

# name -> (description, example)
DOCS: dict[str, tuple[str, Any]] = {
    "model": ("Preset id or alias (`llama-3-8b`, `Llama 3 8B`, `meta-llama/Meta-Llama-3-8B`), a "
              "registered model's id, or a bare size (`7B`, `1.3b`). Default: none (give model, "
              "params_b or arch).", "llama-3-8b"),
    "params_b": ("Size in billions of parameters: a standard architecture of that size; beside "
                 "model/arch it restates the count used for model states.", 7),
    "arch": ("An architecture: our fields (layers, hidden, heads, kv_heads, ffn, vocab, mlp, "
             "tied_embeddings, moe, ...) or a Hugging Face config.json pasted as is. Wins over "
             "model.", {"layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 8,
                        "ffn": 14336, "vocab": 128256}),
    "task": ("What the GPUs do. Default: train (finetune with lora_rank, infer with a serving "
             "quantization).", "train"),
    "finetune_method": ("Fine-tuning method. Default: full, lora with lora_rank, qlora with "
                        "nf4.", "lora"),
    "objective": ("Training objective: sft (default, the language-modelling loss), or a "
                  "preference objective: dpo, ipo (chosen + rejected sequences and a frozen "
                  "reference model), kto (a reference model), orpo, simpo, cpo (chosen + "
                  "rejected, no reference).", "dpo"),
    "seq_len": ("Tokens per sequence; the context length when serving. Default 4096.", 4096),
    "micro_batch": ("Sequences per GPU per forward/backward pass. Default 1.", 1),
    "global_batch": ("Sequences per optimizer step (gradient accumulation keeps it). Default: "
                     "no accumulation.", 512),
    "precision": ("Training precision. Default bf16_mixed (bf16 compute, fp32 master "
                  "weights).", "bf16_mixed"),
    "optimizer": ("Optimizer. Default adamw (two fp32 moments).", "adamw"),
    "framework": ("How gradients and master weights are kept: deepspeed (default, 2+2+12 "
                  "B/param), megatron (fp32 main grads), fsdp, hf.", "deepspeed"),
    "zero_stage": ("ZeRO / FSDP stage over the data-parallel group, 0-3. Default 0.", 3),
    "shard_group": ("HSDP: GPUs one copy of the sharded states spans. Default: all of dp.", 8),
    "tp": ("Tensor parallelism (divides heads and KV heads). Default 1.", 2),
    "pp": ("Pipeline parallelism (divides layers). Default 1.", 1),
    "cp": ("Context parallelism (splits one sequence). Default 1.", 1),
    "ep": ("Expert parallelism (MoE). Default 1.", 1),
    "sequence_parallel": ("Megatron sequence parallelism with tp. Default off.", False),
    "pp_schedule": ("Pipeline schedule. Default 1f1b.", "1f1b"),
    "virtual_stages": ("Interleaved schedule: model chunks per pipeline rank. Default 1.", 1),
    "recompute": ("Activation recompute. Default none.", "full"),
    "flash_attn": ("Fused attention, no s x s matrices kept. Default on.", True),
    "precompute_ref_log_probs": ("DPO, IPO, KTO: TRL's precompute_ref_log_probs, the reference "
                                 "model's log-probs computed once before training, so no "
                                 "reference model is held during it. Default off.", True),
    "chunked_loss": ("A fused linear-cross-entropy kernel (Liger Kernel, torchtune): the loss "
                     "over chunks of tokens, never the full fp32 logits. Default off.", False),
    "offload": ("CPU offload. Default none.", "none"),
    "lora_rank": ("LoRA rank. Default 16 when fine-tuning with LoRA.", 16),
    "lora_targets": ("Linears LoRA adapts. Default all_linear.", "all_linear"),
    "lora_slots": ("Serving: LoRA adapters held on the GPUs at once, each of rank lora_rank (vLLM "
                   "--max-loras, --max-lora-rank). Default none.", 8),
    "quantization": ("Serving weights, or the QLoRA base. Default none (16-bit).", "awq"),
    "kv_cache_dtype": ("KV cache dtype when serving. Default auto (16-bit).", "fp8"),
    "batch": ("Sequences served together. Default 1.", 8),
    "concurrent": ("Concurrent sequences to serve (same as batch). Default 1.", 32),
    "max_num_seqs": ("Serving: the engine's cap on sequences running at once (vLLM --max-num-seqs, "
                     "SGLang --max-running-requests), not a requirement: the engine starts when "
                     "one full-length sequence fits, and queues or preempts past what its KV "
                     "cache holds. The answer says how many fit at full length. Default none.",
                     64),
    "gpu": ("GPU id or alias (`a100-40gb`, `H100`, `4090`). Default: none (the answer lists "
            "the fewest GPUs of every type).", "a100-40gb"),
    "gpu_count": ("How many GPUs. Default: the planner finds the fewest.", 8),
    "nodes": ("Whole nodes (gpus_per_node each) instead of gpu_count.", 1),
    "gpus_per_node": ("GPUs per node. Default: the catalog's server size for the GPU.", 8),
    "tokens": ("Training tokens, for time, GPU-hours and cost.", 1e12),
    "mfu": ("Model FLOPs utilisation for time estimates. Default: the catalog's for the GPU.",
            0.4),
    "price_per_gpu_hour": ("USD per GPU-hour. Default: the catalog's on-demand price.", 2.5),
    "activation_model": ("Activation accounting. Default hf (megatron with tp/pp).", "hf"),
    "overhead_model": ("Framework overhead: measured (CUDA context + allocator reserve, "
                       "default) or flat_10pct.", "measured"),
    "cuda_context_bytes": ("CUDA context (+ NCCL) bytes per GPU. Default: measured values.",
                           536870912),
    "allocator_reserve": ("Share of memory the caching allocator holds back. Default 0.05.",
                          0.05),
    "memory_headroom": ("Planner: share of usable memory a layout may fill. Default 0.95.",
                        0.95),
    "method": ("Planner method: planner (default) or seed_even_split (the S3 seed's counts).",
               "planner"),
}
