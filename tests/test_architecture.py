"""Architectures: exact counts from the shape, and one clear error for shapes no model has."""

from __future__ import annotations

from typing import Any

import pytest

from service.core.errors import InvalidInput
from service.core.model.architecture import MLA, Architecture, MoE
from service.core.model.params import (
    active_parameter_count,
    check_total_size,
    parameter_breakdown,
    parameter_count,
)

LLAMA3_8B: dict[str, Any] = dict(layers=32, hidden=4096, heads=32, kv_heads=8, ffn=14336,
                                 vocab=128256)


def llama(**changes: Any) -> Architecture:
    return Architecture.from_dict({**LLAMA3_8B, **changes})


def test_llama3_8b_exact_count_by_module() -> None:
    arch = llama()
    b = parameter_breakdown(arch)
    assert b.embedding == 128256 * 4096 == b.lm_head
    assert b.attention == 32 * (4096 * (4096 + 2 * 1024) + 4096 * 4096)
    assert b.mlp == 32 * 3 * 4096 * 14336
    assert b.norms == (32 * 2 + 1) * 4096
    assert parameter_count(arch) == 8_030_261_248


def test_gpt2_small_learned_positions_tied_biases() -> None:
    gpt2 = Architecture(layers=12, hidden=768, heads=12, ffn=3072, vocab=50257, mlp="plain",
                        activation="gelu", norm="layernorm", attn_bias=True, attn_out_bias=True,
                        mlp_bias=True, tied_embeddings=True, positions="learned",
                        max_positions=1024)
    assert parameter_count(gpt2) == 124_439_808


def test_mixtral_active_parameters() -> None:
    arch = llama(vocab=32000, moe=MoE(experts=8, experts_per_token=2, expert_ffn=14336))
    assert parameter_count(arch) == 46_702_792_704
    assert active_parameter_count(arch) == 12_879_925_248


def test_moe_leading_dense_layers_and_shared_experts() -> None:
    moe = MoE(experts=4, experts_per_token=1, expert_ffn=64, shared_experts=1, dense_layers=1)
    arch = Architecture(layers=3, hidden=32, heads=4, ffn=128, vocab=100, moe=moe)
    assert (arch.dense_layers, arch.moe_layers) == (1, 2)
    routed_idle = 2 * 3 * (3 * 32 * 64)
    assert parameter_count(arch) - active_parameter_count(arch) == routed_idle


def test_mla_attention_count() -> None:
    mla = MLA(kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128,
              q_lora_rank=1536)
    arch = Architecture(layers=1, hidden=7168, heads=128, ffn=18432, vocab=1, mla=mla)
    q = 7168 * 1536 + 1536 + 1536 * 128 * 192
    kv = 7168 * (512 + 64) + 512 + 512 * 128 * 256
    assert parameter_breakdown(arch).attention == q + kv + 128 * 128 * 7168


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"heads": 7}, "arch.heads"),  # 7 does not divide 4096
        ({"kv_heads": 5}, "arch.kv_heads"),  # 5 does not divide 32
        ({"layers": 0}, "arch.layers"),
        ({"hidden": -1}, "arch.hidden"),
        ({"vocab": 10**9}, "arch.vocab"),
        ({"ffn": 2.5}, "arch.ffn"),
        ({"mlp": "swish"}, "arch.mlp"),
        ({"norm": "batchnorm"}, "arch.norm"),
        ({"dropout": 1.5}, "arch.dropout"),
    ],
)
def test_invalid_shapes_name_the_field(changes: dict[str, object], field: str) -> None:
    with pytest.raises(InvalidInput) as err:
        llama(**changes)
    assert err.value.field == field
    assert err.value.accepted


def test_shapes_past_100_trillion_parameters_are_rejected() -> None:
    huge = llama(layers=1000, hidden=1_000_000, heads=1000, ffn=1_000_000)
    with pytest.raises(InvalidInput) as err:
        check_total_size(huge)
    assert err.value.field == "arch"
    assert err.value.accepted


def test_explicit_head_dim_allows_non_dividing_heads() -> None:
    arch = llama(heads=7, kv_heads=7, head_dim=128)
    assert arch.q_width == 7 * 128


def test_moe_top_k_above_experts_is_rejected() -> None:
    with pytest.raises(InvalidInput) as err:
        llama(moe=MoE(experts=8, experts_per_token=9, expert_ffn=100))
    assert err.value.field == "arch.moe.experts_per_token"


def test_from_dict_names_unknown_fields() -> None:
    with pytest.raises(InvalidInput) as err:
        Architecture.from_dict({**LLAMA3_8B, "hidden_size": 4096})
    assert err.value.field == "arch.hidden_size"
    nested = {**LLAMA3_8B, "moe": {"experts": 8, "experts_per_token": 2, "expert_ffn": 10,
                                   "topk": 2}}
    with pytest.raises(InvalidInput) as err:
        Architecture.from_dict(nested)
    assert err.value.field == "arch.moe.topk"


def test_round_trip_through_dict() -> None:
    arch = llama(moe=MoE(experts=8, experts_per_token=2, expert_ffn=1024))
    assert Architecture.from_dict(arch.to_dict()) == arch
