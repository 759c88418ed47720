"""Parameters of each pipeline stage's layers, for models whose layers are not all alike.

A pipeline splits the layers into stages of ceil(L/pp) consecutive layers (Megatron-LM and
vLLM give each stage a contiguous block). Where every layer is the same, a stage holds
per_stage/L of the layer parameters. Where they differ, the stage's own layers count:
DeepSeek-V3's first 3 layers have dense MLPs and the other 58 routed experts; Llama 4
Maverick alternates dense and MoE layers (``interleave_moe_layer_step`` 2), so a stage of 24
of its 48 layers holds 12 MoE layers, not 24.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from service.core.model.architecture import Architecture
from service.core.model.params import dense_mlp_params, moe_mlp_params, parameter_breakdown


@dataclass(frozen=True, slots=True)
class StageParams:
    """One stage's layer parameters (the embedding and LM head not included)."""

    dense: int  # attention, norms, dense MLPs, routers and shared experts
    experts: int  # routed experts


def moe_layer_indices(arch: Architecture) -> frozenset[int]:
    """Which layers hold routed experts: after the first ``dense_layers``, every
    ``layer_step``-th (the last of each step, as HF's Llama 4 ``(i + 1) % step == 0``)."""
    if arch.moe is None:
        return frozenset()
    first, step = arch.moe.dense_layers, arch.moe.layer_step
    return frozenset(range(first + step - 1, arch.layers, step))


@lru_cache(maxsize=1024)
def stage_params(arch: Architecture, pp: int) -> tuple[StageParams, ...]:
    """Each stage's layer parameters, stages of ceil(L/pp) consecutive layers (the last may
    hold fewer). Attention and norms are taken as the same in every layer."""
    b = parameter_breakdown(arch)
    layers = arch.layers
    shared_per_layer = (b.attention + b.norms) / layers
    dense_mlp = dense_mlp_params(arch, arch.ffn)
    moe_index = moe_layer_indices(arch)
    routed = moe_rest = 0
    if arch.moe is not None:
        routed = arch.moe.experts * dense_mlp_params(arch, arch.moe.expert_ffn)
        moe_rest = moe_mlp_params(arch, arch.moe) - routed
    per_stage = -(-layers // pp)
    stages = []
    for start in range(0, layers, per_stage):
        count = min(per_stage, layers - start)
        moe = sum(1 for i in range(start, start + count) if i in moe_index)
        dense = shared_per_layer * count + (count - moe) * dense_mlp + moe * moe_rest
        stages.append(StageParams(round(dense), moe * routed))
    return tuple(stages)
