"""Serving memory: quantized weights, the KV cache, the forward workspace, concurrency.

KV cache: 2 x layers x kv_heads x head_dim x tokens x bytes (K and V per layer per token;
GQA/MQA store kv_heads < heads, Ainslie et al. 2023). MLA caches the compressed latent,
(kv_lora_rank + rope_dim) per layer per token (DeepSeek-V2 paper, sec. 2.1.2; vLLM and
SGLang store it so). Sliding-window layers keep at most the window.
"""

from __future__ import annotations

from dataclasses import dataclass

from service.core.errors import InvalidInput
from service.core.model.architecture import Architecture
from service.core.model.linears import quantizable_linear_params
from service.core.model.params import parameter_count

# Effective bits per weight, scales and zero points included.
# GPTQ/AWQ 4-bit, group 128: 4 + (16-bit scale + 4-bit zero) / 128 = 4.156 (AutoGPTQ, AutoAWQ).
# GGUF: llama.cpp block formats (q8_0: 34 B per 32 weights = 8.5; q4_0: 18 B/32 = 4.5; k-quants
# per ggml-quants.h super-blocks of 256) and the K_M mixes' file sizes for Llama-2-7B.
QUANT_BITS: dict[str, float] = {
    "none": 16.0, "bf16": 16.0, "fp16": 16.0, "fp32": 32.0,
    "fp8": 8.0, "int8": 8.0,
    "int4": 4.156, "gptq": 4.156, "awq": 4.156, "gptq-8bit": 8.156,
    "nf4": 4.127,
    "gguf-q8_0": 8.5, "gguf-q6_k": 6.5625, "gguf-q5_k_m": 5.69, "gguf-q5_0": 5.5,
    "gguf-q4_k_m": 4.85, "gguf-q4_0": 4.5, "gguf-q3_k_m": 3.91, "gguf-q2_k": 3.35,
}
KV_DTYPE_BYTES: dict[str, float] = {"auto": 2, "bf16": 2, "fp16": 2, "fp32": 4, "fp8": 1, "int8": 1,
                                    "int4": 0.5}


def check_quantization(name: str) -> None:
    if name not in QUANT_BITS:
        raise InvalidInput("quantization", f"unknown quantization {name!r}", ", ".join(QUANT_BITS))


def check_kv_dtype(name: str) -> None:
    if name not in KV_DTYPE_BYTES:
        raise InvalidInput(
            "kv_cache_dtype", f"unknown KV cache dtype {name!r}", ", ".join(KV_DTYPE_BYTES)
        )


def serving_weight_bytes(arch: Architecture, quantization: str) -> int:
    """Weights at their storage precision.

    GPTQ/AWQ/NF4/int8/fp8 quantize the layers' linear weights only; embeddings, LM head and
    norms stay 16-bit. GGUF's effective bits already mix all tensors, so they apply to all.
    """
    check_quantization(quantization)
    total = parameter_count(arch)
    bits = QUANT_BITS[quantization]
    if quantization in ("none", "bf16", "fp16", "fp32") or quantization.startswith("gguf"):
        return round(total * bits / 8)
    linear = quantizable_linear_params(arch)
    return round(linear * bits / 8 + (total - linear) * 2)


def kv_bytes_per_token(arch: Architecture, kv_dtype: str, context: int) -> float:
    """KV cache bytes per token of context, averaged over layers (sliding windows included)."""
    check_kv_dtype(kv_dtype)
    b = KV_DTYPE_BYTES[kv_dtype]
    if arch.mla is not None:
        per_layer = (arch.mla.kv_lora_rank + arch.mla.qk_rope_head_dim) * b
    else:
        per_layer = 2 * arch.kv_width * b
    window_share = arch.sliding_window_layers if arch.sliding_window else 0.0
    if window_share and context > arch.sliding_window:
        kept = (1 - window_share) + window_share * arch.sliding_window / context
    else:
        kept = 1.0
    return arch.layers * per_layer * kept


def kv_cache_bytes(arch: Architecture, kv_dtype: str, context: int, sequences: int) -> int:
    """2 x layers x kv_heads x head_dim x context x sequences x bytes (MLA: latent only)."""
    return round(kv_bytes_per_token(arch, kv_dtype, context) * context * sequences)


@dataclass(frozen=True, slots=True)
class ServingBudget:
    """vLLM's way of sizing the KV cache (``gpu_memory_utilization``, worker profiling)."""

    memory_fraction: float = 0.90  # vLLM --gpu-memory-utilization default
    max_batched_tokens: int = 8192  # tokens in one forward pass (chunked prefill budget)
    non_torch_bytes: int = 1 << 30  # CUDA context, NCCL, cuBLAS workspaces (vLLM measures it)
    cuda_graph_bytes: int = 512 << 20  # captured decode graphs, typical 0.3-1 GiB


def forward_workspace_bytes(arch: Architecture, tokens: int, sequences: int, tp: int = 1) -> int:
    """Peak of one forward pass during serving (one layer alive at a time).

    Per token in 16-bit: residual and norm output (2h), q/k/v (q + 2kv), attention output (q),
    the MLP's up/gate outputs (2f or expert k x 2f) split by TP; plus fp32 logits of the last
    token of each sequence for sampling (4V).
    """
    h = arch.hidden
    ffn = arch.ffn
    if arch.moe is not None:
        ffn = max(ffn, arch.moe.experts_per_token * arch.moe.expert_ffn)
    per_token = 2 * (2 * h + (2 * arch.q_width + 2 * arch.kv_width + 2 * ffn) / tp)
    return round(tokens * per_token + sequences * arch.vocab * 4 / tp)


def kv_budget_bytes(capacity: int, weights: int, workspace: int, budget: ServingBudget) -> int:
    """KV memory = fraction x capacity - weights - activation peak - non-torch - CUDA graphs."""
    return round(capacity * budget.memory_fraction) - weights - workspace \
        - budget.non_torch_bytes - budget.cuda_graph_bytes


def max_concurrent_sequences(kv_budget: int, per_sequence_kv: int) -> int:
    """Whole sequences of the given context whose KV cache fits the budget (paging ignored)."""
    if kv_budget <= 0 or per_sequence_kv <= 0:
        return 0
    return kv_budget // per_sequence_kv
