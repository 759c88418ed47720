"""A pipeline stage holds its own layers: models whose layers differ (dense first layers,
alternating MoE layers) are split by what each stage really holds."""

from __future__ import annotations

from ask_support import ask

from service.core.job.spec import Parallelism
from service.core.memory.model_state import rank_params
from service.core.model.params import parameter_breakdown
from service.core.model.presets import find_preset
from service.core.model.stage_params import moe_layer_indices, stage_params


def test_llama4_maverick_alternates_dense_and_moe_layers() -> None:
    arch = find_preset("llama-4-maverick").arch
    assert moe_layer_indices(arch) == frozenset(range(1, 48, 2))  # HF: (i + 1) % 2 == 0
    halves = stage_params(arch, 2)
    assert halves[0] == halves[1]  # each half holds 12 of the 24 MoE layers
    total = parameter_breakdown(arch)
    layers = total.attention + total.mlp + total.norms
    assert abs(sum(s.dense + s.experts for s in halves) - layers) <= 2


def test_deepseek_v3s_dense_first_layers_make_the_first_stage_lighter() -> None:
    arch = find_preset("deepseek-v3").arch
    first, second, *_ = stage_params(arch, 8)
    assert first.experts < second.experts  # layers 0-2 have dense MLPs
    busiest = rank_params(arch, Parallelism(tp=8, pp=8))
    assert busiest.experts == -(-second.experts // 8)


def test_a_dense_model_splits_its_layers_evenly() -> None:
    arch = find_preset("llama-3.1-70b").arch
    stages = stage_params(arch, 4)
    assert len({s.dense for s in stages}) == 1 and all(s.experts == 0 for s in stages)


def test_maverick_in_bf16_is_served_on_two_h100_nodes() -> None:
    """About 800 GB of bf16 weights: 16 H100s hold about 50 GB each (review: it had been 24,
    with every MoE layer counted in one stage)."""
    reply = ask("how many GPUs to host Llama 4 Maverick in bf16? H100s").reply
    assert "on 16x H100 80GB SXM (2 nodes) (TP=8, PP=2)" in reply
