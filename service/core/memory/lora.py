"""LoRA adapters and the QLoRA 4-bit base.

LoRA (Hu et al. 2021): each adapted linear W (in x out) gains A (in x r) and B (r x out),
r*(in+out) trainable parameters; the base stays frozen. peft's default
(``autocast_adapter_dtype=True``) keeps adapters in fp32: 4 B weights + 4 B grads + 8 B AdamW.
QLoRA (Dettmers et al. 2023): linear weights in 4-bit NF4, blocks of 64 with an 8-bit absmax,
double-quantized with one fp32 constant per 256 blocks; embeddings, norms and lm_head stay 16-bit.
"""

from __future__ import annotations

from functools import lru_cache

from service.core.model.architecture import Architecture
from service.core.model.linears import (
    attention_linear_shapes,
    expert_weight_params,
    linear_attention_shapes,
    mlp_linear_shapes,
    quantizable_linear_params,
)

NF4_BITS = 4.0
NF4_BLOCK = 64
DOUBLE_QUANT_BITS_PER_WEIGHT = 8 / NF4_BLOCK + 32 / (NF4_BLOCK * 256)  # 0.127 bits
SINGLE_QUANT_BITS_PER_WEIGHT = 32 / NF4_BLOCK  # 0.5 bits
NF4_BITS_PER_WEIGHT = NF4_BITS + DOUBLE_QUANT_BITS_PER_WEIGHT  # 4.127
ADAPTER_BYTES_PER_PARAM = 4  # fp32 adapters (peft autocast_adapter_dtype)


def _adapter(rank: int, shapes: list[tuple[int, int]]) -> int:
    return sum(rank * (i + o) for i, o in shapes)


@lru_cache(maxsize=1024)  # the planner asks for the same model's adapters many times
def lora_params(arch: Architecture, rank: int, targets: str) -> int:
    """Trainable adapter parameters: sum over adapted linears of r*(in+out).

    ``attention``: Q, K, V, O of every softmax-attention layer (a hybrid's linear-attention
    layers have none). ``all_linear`` is peft ``target_modules="all-linear"``, which adapts every
    ``nn.Linear`` module but the output layer (``tuners_utils._maybe_include_all_linear_layers``
    matches modules by class): also a hybrid's Gated DeltaNet projections, every MLP linear, the
    shared experts, and the routed experts unless they are fused 3-D ``nn.Parameter``s
    (``MoE.fused_experts``: no module to match; peft adapts them only when named in
    ``target_parameters``), not lm_head.
    """
    total = arch.attention_layers * _adapter(rank, attention_linear_shapes(arch))
    if targets != "all_linear":
        return total
    if arch.linear_attention is not None:
        total += arch.linear_attention_layers * _adapter(
            rank, linear_attention_shapes(arch, arch.linear_attention))
    total += arch.dense_layers * _adapter(rank, mlp_linear_shapes(arch, arch.ffn))
    if arch.moe is not None:
        moe = arch.moe
        routed = 0 if moe.fused_experts else \
            moe.experts * _adapter(rank, mlp_linear_shapes(arch, moe.expert_ffn))
        shared_ffn = moe.shared_expert_ffn or moe.expert_ffn
        shared = moe.shared_experts * _adapter(rank, mlp_linear_shapes(arch, shared_ffn))
        total += arch.moe_layers * (routed + shared)
    return total


def bnb_4bit_params(arch: Architecture) -> int:
    """What bitsandbytes' 4-bit conversion quantizes: it replaces ``nn.Linear`` modules, so every
    quantizable linear except routed experts stored as fused 3-D ``nn.Parameter``s
    (``MoE.fused_experts``, transformers 5): those stay in their 16-bit dtype (bitsandbytes issue
    #1849, open as of 2026-11; peft's ``prepare_model_for_kbit_training`` then casts them to
    fp32 with the other non-quantized parameters)."""
    linear = quantizable_linear_params(arch)
    if arch.moe is not None and arch.moe.fused_experts:
        linear -= expert_weight_params(arch)
    return linear
