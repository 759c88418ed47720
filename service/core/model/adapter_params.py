"""LoRA adapters' parameter count (Hu et al. 2021): each adapted linear W (in x out) gains
A (in x r) and B (r x out), r*(in+out) trainable parameters; the base stays frozen. Counted
here, beside the model's own parameters, for the memory model and the training time alike."""

from __future__ import annotations

from functools import lru_cache

from service.core.model.architecture import Architecture
from service.core.model.linears import (
    attention_linear_shapes,
    linear_attention_shapes,
    mlp_linear_shapes,
)


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
