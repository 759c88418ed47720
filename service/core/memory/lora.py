"""LoRA adapters and the QLoRA 4-bit base.

LoRA (Hu et al. 2021): each adapted linear W (in x out) gains A (in x r) and B (r x out),
r*(in+out) trainable parameters; the base stays frozen. peft's default
(``autocast_adapter_dtype=True``) keeps adapters in fp32: 4 B weights + 4 B grads + 8 B AdamW.
QLoRA (Dettmers et al. 2023): linear weights in 4-bit NF4, blocks of 64 with an 8-bit absmax,
double-quantized with one fp32 constant per 256 blocks; embeddings, norms and lm_head stay 16-bit.
"""

from __future__ import annotations

from service.core.model.architecture import Architecture
from service.core.model.linears import attention_linear_shapes, mlp_linear_shapes

NF4_BITS = 4.0
NF4_BLOCK = 64
DOUBLE_QUANT_BITS_PER_WEIGHT = 8 / NF4_BLOCK + 32 / (NF4_BLOCK * 256)  # 0.127 bits
SINGLE_QUANT_BITS_PER_WEIGHT = 32 / NF4_BLOCK  # 0.5 bits
NF4_BITS_PER_WEIGHT = NF4_BITS + DOUBLE_QUANT_BITS_PER_WEIGHT  # 4.127
ADAPTER_BYTES_PER_PARAM = 4  # fp32 adapters (peft autocast_adapter_dtype)


def lora_params(arch: Architecture, rank: int, targets: str) -> int:
    """Trainable adapter parameters: sum over adapted linears of r*(in+out).

    ``attention``: Q, K, V, O in every layer. ``all_linear``: also every MLP linear, every
    routed and shared expert of MoE layers (peft ``target_modules="all-linear"``), not lm_head.
    """
    per_layer = sum(rank * (i + o) for i, o in attention_linear_shapes(arch))
    total = arch.layers * per_layer
    if targets == "all_linear":
        dense = sum(rank * (i + o) for i, o in mlp_linear_shapes(arch, arch.ffn))
        total += arch.dense_layers * dense
        if arch.moe is not None:
            moe = arch.moe
            expert = sum(rank * (i + o) for i, o in mlp_linear_shapes(arch, moe.expert_ffn))
            shared_ffn = moe.shared_expert_ffn or moe.expert_ffn
            shared = sum(rank * (i + o) for i, o in mlp_linear_shapes(arch, shared_ffn))
            total += arch.moe_layers * (moe.experts * expert + moe.shared_experts * shared)
    return total
