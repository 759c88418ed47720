"""LoRA adapters and the QLoRA 4-bit base.

LoRA (Hu et al. 2021): r*(in+out) trainable parameters per adapted linear, counted in
``model/adapter_params.py``; the base stays frozen. peft's default
(``autocast_adapter_dtype=True``) keeps adapters in fp32: 4 B weights + 4 B grads + 8 B AdamW.
QLoRA (Dettmers et al. 2023): linear weights in 4-bit NF4, blocks of 64 with an 8-bit absmax,
double-quantized with one fp32 constant per 256 blocks; embeddings, norms and lm_head stay 16-bit.
"""

from __future__ import annotations

from service.core.model.architecture import Architecture
from service.core.model.linears import expert_weight_params, quantizable_linear_params

NF4_BITS = 4.0
NF4_BLOCK = 64
DOUBLE_QUANT_BITS_PER_WEIGHT = 8 / NF4_BLOCK + 32 / (NF4_BLOCK * 256)  # 0.127 bits
SINGLE_QUANT_BITS_PER_WEIGHT = 32 / NF4_BLOCK  # 0.5 bits
NF4_BITS_PER_WEIGHT = NF4_BITS + DOUBLE_QUANT_BITS_PER_WEIGHT  # 4.127
ADAPTER_BYTES_PER_PARAM = 4  # fp32 adapters (peft autocast_adapter_dtype)


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
