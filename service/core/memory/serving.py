"""Serving memory: quantized weights, the KV cache, the forward workspace, concurrency.

KV cache: 2 x layers x kv_heads x head_dim x tokens x bytes (K and V per layer per token;
GQA/MQA store kv_heads < heads, Ainslie et al. 2023). MLA caches the compressed latent,
(kv_lora_rank + rope_dim) per layer per token (DeepSeek-V2 paper, sec. 2.1.2; vLLM and
SGLang store it so). Sliding-window layers keep at most the window (gpt-oss: 128 tokens on
every other layer); Llama 4's chunked-attention layers, read as a window of one chunk, at most
one chunk (vLLM ``ChunkedLocalAttentionSpec``). Attention sinks add no cache.

Hybrid models (Qwen3-Next): only the attention layers cache K and V; each linear-attention
(Gated DeltaNet) layer keeps a fixed state per sequence instead, whatever its length: the
recurrent state value_heads x key_head_dim x value_head_dim and the convolution state
conv_width x (kernel - 1), in the model's 16-bit dtype (vLLM ``MambaStateShapeCalculator.
gated_delta_net_state_shape``, ``MambaStateDtypeCalculator``: ``mamba_cache_dtype`` "auto"); both
are split by tensor parallelism (value heads / tp, conv channels / tp), unlike the KV of few KV
heads (``serving_split.py``). ``kv_bytes_per_token`` spreads that fixed state over the context,
so that bytes per token x context is the sequence's whole cache.
"""

from __future__ import annotations

from dataclasses import dataclass

from service.core.hardware.gpus import Gpu
from service.core.memory.formula import Component, component_of
from service.core.model.architecture import Architecture
from service.core.model.formats import (
    KV_DTYPE_BYTES,
    QUANT_BITS,
    check_kv_dtype,
    check_weight_format,
)
from service.core.model.linears import (
    expert_weight_params,
    mlp_linear_shapes,
    quantizable_linear_params,
)
from service.core.model.params import mtp_params, parameter_count

WHOLE_MODEL_FORMATS = ("none", "bf16", "fp16", "fp32")


@dataclass(frozen=True, slots=True)
class StateLayout:
    """How a serving engine keeps one linear-attention layer's per-sequence state: bytes per
    recurrent-state element, bytes per convolution-state element, and whether the convolution
    state holds the last ``conv_kernel`` inputs or ``conv_kernel - 1``."""

    recurrent_bytes: int
    conv_bytes: int
    conv_keeps_kernel: bool


# vLLM: both states in the model's bf16 (mamba_cache_dtype "auto"), kernel - 1 conv columns
VLLM_STATE = StateLayout(recurrent_bytes=2, conv_bytes=2, conv_keeps_kernel=False)


def quantized_params(arch: Architecture, quantization: str) -> int:
    """The parameters a weight format stores at its own bits; the rest stay 16-bit.

    - 16/32-bit formats, and GGUF (whose effective bits already mix all tensors): every weight;
    - ``mxfp4`` (gpt-oss checkpoints): the routed experts' weight matrices only; attention,
      router, expert biases, embeddings and head are bf16 (``quantization_config.
      modules_to_not_convert``);
    - GPTQ/AWQ/NF4/int8/fp8 and ``fp8-block`` (DeepSeek-V3, Kimi K2 checkpoints): every layer's
      linear weights, experts included; embeddings, LM head, norms, biases, routers and a vision
      tower stay 16-bit;
    - ``fp8-ffn`` (Meta's Llama 3.1 405B FP8; Llama 3 paper sec. 6.2): the feed-forward linears
      of every layer but the first and the last; attention and those two layers stay bf16.
    """
    if quantization in WHOLE_MODEL_FORMATS or quantization.startswith("gguf"):
        return parameter_count(arch)
    if quantization == "mxfp4":
        return expert_weight_params(arch)
    if quantization == "fp8-ffn":
        ffn = sum(i * o for i, o in mlp_linear_shapes(arch, arch.ffn))
        return max(0, arch.dense_layers - 2) * ffn
    return quantizable_linear_params(arch)


def weight_terms(arch: Architecture, quantization: str) -> dict[str, float]:
    """The weights' storage split: ``quantized_params`` at ``bits`` per weight, the rest at
    ``other_bits`` (see ``quantized_params``)."""
    check_weight_format(quantization)
    total = parameter_count(arch)
    quantized = quantized_params(arch, quantization)
    return {"quantized_params": quantized, "bits": QUANT_BITS[quantization],
            "other_params": total - quantized, "other_bits": 16}


def _weights_note(arch: Architecture, quantization: str) -> str:
    note = f"{quantization} weights"
    if quantization == "mxfp4":
        note += " (routed experts at 4.25 bits, the rest bf16)"
    elif quantization == "fp8-ffn":
        note += " (feed-forward linears but the first and last layers'; attention and the rest bf16)"
    elif quantization not in WHOLE_MODEL_FORMATS and not quantization.startswith("gguf"):
        note += " (layer linears; embeddings, head, norms and routers 16-bit)"
    if arch.mtp_layers:
        note += (f"; the {mtp_params(arch) / 1e9:.1f}B-parameter multi-token-prediction layer is "
                 "not loaded (vLLM/SGLang load it only for MTP speculative decoding)")
    if arch.vision is not None:
        note += "; the vision tower's weights are included"
    return note


def serving_weights(arch: Architecture, quantization: str, scale: float = 1.0,
                    split: int = 1, stage_share: float | None = None) -> Component:
    """(quantized params x bits + other params x 16 bits) / 8 x stated-size scale / (tp x pp);
    with pipeline stages (``stage_share``), x the busiest GPU's share of the parameters: its
    stage's layers (the most MoE layers a stage holds) and the larger of the embedding and the
    head, / tp (``model_state.rank_params``), not an even split."""
    if stage_share is not None:
        return component_of(
            "weights", "(quantized_params * bits + other_params * other_bits) / 8 * scale "
            "* rank_share", {**weight_terms(arch, quantization), "scale": scale,
                             "rank_share": stage_share},
            "AutoGPTQ/AutoAWQ group-128 scales, llama.cpp GGUF block sizes, OCP MXFP4, "
            "DeepSeek-V3 fp8 128x128 blocks (model/formats.py); vLLM get_pp_indices",
            _weights_note(arch, quantization) + "; the busiest pipeline stage's share")
    return component_of(
        "weights", "(quantized_params * bits + other_params * other_bits) / 8 * scale / split",
        {**weight_terms(arch, quantization), "scale": scale, "split": split},
        "AutoGPTQ/AutoAWQ group-128 scales, llama.cpp GGUF block sizes, OCP MXFP4, DeepSeek-V3 "
        "fp8 128x128 blocks (model/formats.py)", _weights_note(arch, quantization))


def serving_weight_bytes(arch: Architecture, quantization: str) -> int:
    """The whole model's weights in a storage format, in bytes."""
    return serving_weights(arch, quantization).bytes


def linear_state_bytes(arch: Architecture, layout: StateLayout = VLLM_STATE) -> int:
    """Fixed per-sequence state of all linear-attention layers (0 without any), on one GPU:
    layers x (value_heads x key_head_dim x value_head_dim x recurrent_bytes
    + conv_width x conv_columns x conv_bytes). vLLM, Qwen3-Next-80B:
    36 x (32 x 128 x 128 x 2 + 8192 x 3 x 2) = 39,518,208 B (37.7 MiB)."""
    block = arch.linear_attention
    if block is None:
        return 0
    recurrent = block.value_heads * block.key_head_dim * block.value_head_dim
    columns = block.conv_kernel if layout.conv_keeps_kernel else block.conv_kernel - 1
    per_layer = recurrent * layout.recurrent_bytes + block.conv_width * columns * layout.conv_bytes
    return arch.linear_attention_layers * per_layer


def window_tokens(window: int, context: int, chunk: int, block: int) -> int:
    """Tokens a sliding-window layer holds for one sequence: the window plus the chunk being
    prefilled, and a block for a window that starts mid-block (vLLM
    ``SlidingWindowSpec.max_admission_blocks_per_request``: cdiv(min(W - 1 + chunk, context),
    block) + 1 blocks, the figure that sizes the pool and admits requests); the whole context
    when that covers it. ``chunk`` 0: the bare window (Hugging Face's sliding-window cache)."""
    if not chunk:
        return min(window, context)
    held = window - 1 + chunk
    return context if held >= context else -(-held // block) * block + block


def attention_kv_bytes_per_token(arch: Architecture, kv_dtype: str, context: int,
                                 chunk: int = 0, block: int = 1) -> float:
    """K and V bytes per token of context of the attention layers, averaged over layers
    (sliding windows included: ``window_tokens`` with the engine's prefill ``chunk`` and
    ``block``); a hybrid's linear-attention state is not in it."""
    check_kv_dtype(kv_dtype)
    b = KV_DTYPE_BYTES[kv_dtype]
    if arch.mla is not None:
        per_layer = (arch.mla.kv_lora_rank + arch.mla.qk_rope_head_dim) * b
    else:
        per_layer = 2 * arch.kv_width * b
    window_share = arch.sliding_window_layers if arch.sliding_window else 0.0
    if window_share and context > arch.sliding_window:
        held = window_tokens(arch.sliding_window, context, chunk, block)
        kept = (1 - window_share) + window_share * held / context
    else:
        kept = 1.0
    return arch.attention_layers * per_layer * kept


def kv_bytes_per_token(arch: Architecture, kv_dtype: str, context: int) -> float:
    """KV cache bytes per token of context, plus a hybrid model's fixed per-sequence state
    spread over the context."""
    return attention_kv_bytes_per_token(arch, kv_dtype, context) \
        + linear_state_bytes(arch) / max(1, context)


def kv_cache_bytes(arch: Architecture, kv_dtype: str, context: int, sequences: int) -> int:
    """2 x layers x kv_heads x head_dim x context x sequences x bytes (MLA: latent only)."""
    return round(kv_bytes_per_token(arch, kv_dtype, context) * context * sequences)


@dataclass(frozen=True, slots=True)
class ServingBudget:
    """vLLM's way of sizing the KV cache (``gpu_memory_utilization``, worker profiling)."""

    memory_fraction: float = 0.90  # vLLM --gpu-memory-utilization default
    # tokens in one forward pass (chunked prefill budget); None: vLLM's default for the GPU
    max_batched_tokens: int | None = None
    non_torch_bytes: int = 1 << 30  # CUDA context, NCCL, cuBLAS workspaces (vLLM measures it)
    cuda_graph_bytes: int = 512 << 20  # captured decode graphs, typical 0.3-1 GiB
    block_tokens: int = 16  # vLLM's KV block (--block-size default)

    def batched_tokens(self, gpu: Gpu | None) -> int:
        """The chunked-prefill budget: as set, else ``vllm serve``'s default for the GPU
        (vLLM ``EngineArgs.get_batch_defaults``: 8,192 on GPUs of at least 70 GiB that are not
        A100s, such as H100, H200 and MI300X; 2,048 on the others, where a larger one lowered
        throughput, vLLM PR #17885)."""
        if self.max_batched_tokens is not None:
            return self.max_batched_tokens
        large = gpu is not None and gpu.memory_bytes_as_sold >= 70 * 2**30 \
            and not gpu.id.startswith("a100")
        return VLLM_LARGE_GPU_BATCHED if large or gpu is None else VLLM_BATCHED


VLLM_LARGE_GPU_BATCHED = 8192
VLLM_BATCHED = 2048

# llama.cpp / ollama: no memory reserved ahead and no CUDA graph pool; one compute buffer for
# n_ubatch = 512 tokens (llama-server's default); the CUDA context of a process with lazily
# loaded modules (CUDA 12.2+ default) and cuBLAS, about 0.3-0.5 GB: 512 MiB
LLAMACPP = ServingBudget(memory_fraction=0.95, max_batched_tokens=512, non_torch_bytes=512 << 20,
                         cuda_graph_bytes=0, block_tokens=1)


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
