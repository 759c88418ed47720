"""The 2025 model families: MTP layers, MXFP4 and fp8 checkpoints, sinks and sliding windows,
hybrid linear attention, vision towers, checked against the totals the Hugging Face hub stores."""

from __future__ import annotations

import json
from math import ceil
from pathlib import Path
from typing import Any

import pytest
from engine_support import assumption_lines

from service.cli import main
from service.core.errors import InvalidInput
from service.core.job.request import EstimateRequest
from service.core.job.resolve import resolve
from service.core.memory.serving import (
    kv_bytes_per_token,
    linear_state_bytes,
    quantized_params,
    serving_weight_bytes,
)
from service.core.model.architecture import Architecture
from service.core.model.hf_config import architecture_from_hf_config
from service.core.model.linears import (
    attention_linear_shapes,
    expert_weight_params,
    mlp_linear_shapes,
    quantizable_linear_params,
)
from service.core.model.lookup import resolve_model
from service.core.model.params import (
    mtp_params,
    parameter_breakdown,
    parameter_count,
)
from service.core.model.presets import find_preset
from service.core.model.vision import image_tokens

FIXTURES = Path(__file__).parent / "fixtures" / "hf_configs"
GIB = 1 << 30


def config(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text())
    return data


def arch_of(name: str, **changes: Any) -> Architecture:
    return architecture_from_hf_config(config(name) | changes)


# ---- multi-token prediction: counted apart, and the hub's totals reproduced exactly ----------


def test_hub_totals_are_the_main_model_plus_the_stored_mtp_layer() -> None:
    # The hub counts every stored tensor: GLM stores the MTP layer with its own embedding and
    # head copies (model.layers.N.embed_tokens, shared_head.head); Qwen3-Next shares them.
    air = arch_of("glm-4.5-air")
    copies = 2 * air.vocab * air.hidden
    assert parameter_count(air) + mtp_params(air) + copies == 110_468_824_832  # zai-org/GLM-4.5-Air
    glm = find_preset("glm-4.5").arch
    assert parameter_count(glm) + mtp_params(glm) + 2 * glm.vocab * glm.hidden == 358_337_791_296
    nxt = arch_of("qwen3-next-80b-a3b")
    assert nxt.mtp_layers == 1  # vLLM's default: num_nextn_predict_layers absent means 1
    assert parameter_count(nxt) + mtp_params(nxt) == 81_324_862_720  # Qwen3-Next-80B-A3B-Instruct


def test_deepseek_hub_total_adds_mtp_copies_and_one_fp8_scale_per_block() -> None:
    """684,531,386,000 = main + MTP layer + its embedding and head copies + one fp32
    weight_scale_inv per 128x128 block of every fp8 linear: each layer linear, experts included,
    but not the MTP's eh_proj, routers, embeddings or head."""
    arch = arch_of("deepseek-r1")
    moe = arch.moe
    assert moe is not None and arch.mtp_layers == 1

    def blocks(shapes: list[tuple[int, int]]) -> int:
        return sum(ceil(i / 128) * ceil(o / 128) for i, o in shapes)

    attention = blocks(attention_linear_shapes(arch))
    moe_layer = attention + (moe.experts + moe.shared_experts) * blocks(
        mlp_linear_shapes(arch, moe.expert_ffn))
    dense_layer = attention + blocks(mlp_linear_shapes(arch, arch.ffn))
    scales = arch.dense_layers * dense_layer + (arch.moe_layers + 1) * moe_layer
    stored = parameter_count(arch) + mtp_params(arch) + 2 * arch.vocab * arch.hidden + scales
    assert stored == 684_531_386_000


def test_mtp_is_neither_in_the_totals_nor_in_serving_weights() -> None:
    arch = find_preset("deepseek-v3").arch
    assert mtp_params(arch) == 11_610_068_224  # README_WEIGHTS: "11.5B unique" MTP parameters
    assert parameter_count(arch) == 671_026_419_200
    no_mtp = arch.with_changes(mtp_layers=0)
    assert serving_weight_bytes(arch, "bf16") == serving_weight_bytes(no_mtp, "bf16")
    assert mtp_params(no_mtp) == 0


# ---- checkpoint formats -------------------------------------------------------------------


@pytest.mark.parametrize(("name", "gib"), [("gpt-oss-120b", 60.8), ("gpt-oss-20b", 12.8)])
def test_mxfp4_checkpoints_match_the_model_card_sizes(name: str, gib: float) -> None:
    """gpt-oss model card: 60.8 GiB and 12.8 GiB; only the routed experts' weights are MXFP4."""
    preset = find_preset(name)
    assert preset.weight_format == "mxfp4"
    size = serving_weight_bytes(preset.arch, "mxfp4") / GIB
    assert size == pytest.approx(gib, abs=0.05)
    assert quantized_params(preset.arch, "mxfp4") == expert_weight_params(preset.arch)


def test_fp8_block_quantizes_layer_linears_not_routers_embeddings_or_head() -> None:
    arch = find_preset("deepseek-v3").arch
    quantized = quantized_params(arch, "fp8-block")
    assert quantized == quantizable_linear_params(arch)
    rest = parameter_count(arch) - quantized
    router = arch.moe_layers * (arch.hidden + 1) * 256
    assert rest > 2 * arch.vocab * arch.hidden + router  # embeddings, head, routers, norms
    assert rest < 2 * arch.vocab * arch.hidden + router + 10**8
    weights = serving_weight_bytes(arch, "fp8-block")
    assert 670e9 < weights < 680e9  # half of the 1.34 TB in bf16


def test_native_formats_of_the_presets() -> None:
    assert {find_preset(n).weight_format for n in ("deepseek-v3", "deepseek-r1", "deepseek v3.1",
                                                   "kimi-k2")} == {"fp8-block"}
    for name in ("llama-4-scout", "glm-4.5", "qwen3-next", "qwen3-coder", "mistral-large-2"):
        assert find_preset(name).weight_format == "bf16"
    model = resolve_model("deepseek-r1", None, None)
    assert model.weight_format == "fp8-block" and "fp8-block" in model.checkpoint
    assert model.checkpoint in model.description


# ---- attention: sliding windows, sinks, chunks --------------------------------------------


def test_gpt_oss_alternates_a_128_token_window_and_has_sinks() -> None:
    arch = arch_of("gpt-oss-120b")
    assert (arch.sliding_window, arch.sliding_window_layers, arch.attn_sinks) == (128, 0.5, True)
    assert arch.attn_bias and arch.attn_out_bias and arch.mlp_bias
    assert arch.moe is not None and arch.moe.router_bias and arch.moe.experts_per_token == 4
    full_layer = 2 * arch.kv_width * 2  # bf16 K and V of one layer, one token
    context = 131072
    expected = 18 * full_layer + 18 * full_layer * 128 / context
    assert kv_bytes_per_token(arch, "bf16", context) == pytest.approx(expected)
    without = arch.with_changes(attn_sinks=False)
    assert parameter_count(arch) - parameter_count(without) == arch.layers * arch.heads


def test_llama4_chunked_layers_keep_one_chunk() -> None:
    arch = arch_of("llama-4-scout")
    assert (arch.sliding_window, arch.sliding_window_layers) == (8192, 0.75)  # NoPE every 4th
    assert not arch.qk_norm  # Llama 4's L2 q/k norm has no weights
    assert arch.moe is not None and arch.moe.shared_experts == 1 and arch.moe_layers == 48
    maverick = find_preset("llama-4-maverick").arch
    assert maverick.moe is not None and (maverick.moe_layers, maverick.dense_layers) == (24, 24)
    assert maverick.ffn == 16384


@pytest.mark.parametrize("name", ["gpt-oss-20b", "gpt-oss-120b", "llama-4-scout"])
def test_fused_experts_are_read_from_the_config_and_agree_with_the_preset(name: str) -> None:
    # transformers GptOssExperts / Llama4TextExperts: one 3-D gate_up and down nn.Parameter
    moe, preset_moe = arch_of(name).moe, find_preset(name).arch.moe
    assert moe is not None and preset_moe is not None
    assert moe.fused_experts and preset_moe.fused_experts


# ---- hybrid linear attention --------------------------------------------------------------


def test_qwen3_next_layers_and_state() -> None:
    arch = arch_of("qwen3-next-80b-a3b")
    block = arch.linear_attention
    assert block is not None and block.full_attention_interval == 4
    assert (arch.attention_layers, arch.linear_attention_layers) == (12, 36)
    assert arch.attn_output_gate and arch.qk_norm and arch.rotary_fraction == 0.25
    # vLLM gated_delta_net_state_shape: (32, 128, 128) recurrent + (8192, 3) conv, bf16
    assert linear_state_bytes(arch) == 36 * (32 * 128 * 128 + 8192 * 3) * 2 == 39_518_208
    context = 4096
    kv = 12 * 2 * 2 * 256 * 2  # 12 layers x K, V x 2 heads x 256 x 2 B
    assert kv_bytes_per_token(arch, "bf16", context) * context == pytest.approx(
        kv * context + 39_518_208)
    assert parameter_count(arch) == 79_674_391_296


def test_layer_types_must_follow_a_full_attention_interval() -> None:
    layers = 48
    types = ["linear_attention"] * layers
    types[5] = "full_attention"
    with pytest.raises(InvalidInput) as err:
        arch_of("qwen3-next-80b-a3b", layer_types=types)
    assert err.value.field == "layer_types"
    regular = ["full_attention" if (i + 1) % 2 == 0 else "linear_attention" for i in range(layers)]
    assert arch_of("qwen3-next-80b-a3b", layer_types=regular).attention_layers == 24


# ---- vision towers ------------------------------------------------------------------------


def test_vision_towers_are_counted_and_left_out_of_active() -> None:
    vl = arch_of("qwen2.5-vl-7b")
    b = parameter_breakdown(vl)
    assert b.vision == 676_550_144  # transformers: model.visual parameters
    assert parameter_count(vl) == 8_292_166_656
    assert vl.attn_bias and not vl.attn_out_bias  # Qwen2 decoder
    scout = arch_of("llama-4-scout")
    assert parameter_breakdown(scout).vision == 871_932_416
    assert find_preset("qwen2.5-vl-32b").arch.vision is not None
    assert parameter_count(find_preset("qwen2.5-vl-32b").arch) == 33_452_718_336


@pytest.mark.parametrize(("height", "width", "tokens"),
                         [(1024, 1024, 1369), (448, 448, 256), (28, 28, 4), (10, 10, 4)])
def test_qwen_vl_image_tokens(height: int, width: int, tokens: int) -> None:
    tower = arch_of("qwen2.5-vl-7b").vision
    assert tower is not None and image_tokens(tower, height, width) == tokens


def test_huge_images_are_capped_at_the_processor_pixel_limit() -> None:
    tower = arch_of("qwen2.5-vl-7b").vision
    assert tower is not None and image_tokens(tower, 8000, 8000) <= 16384


def test_llama4_image_tokens_per_tile() -> None:
    tower = arch_of("llama-4-scout").vision
    assert tower is not None
    assert image_tokens(tower, 336, 336) == 144
    assert image_tokens(tower, 672, 672) == 144 * 5  # 4 tiles and the global one


def test_a_bad_vision_config_names_its_key() -> None:
    data = config("qwen2.5-vl-7b")
    data["vision_config"] = {**data["vision_config"], "depth": 0}
    with pytest.raises(InvalidInput) as err:
        architecture_from_hf_config(data)
    assert err.value.field == "vision_config.depth"
    data["vision_config"] = "big"
    with pytest.raises(InvalidInput) as err:
        architecture_from_hf_config(data)
    assert err.value.field == "vision_config"


# ---- the answer says what is not modelled -------------------------------------------------


@pytest.mark.parametrize(("name", "words"), [
    ("qwen2.5-vl-7b", "image tokens"),
    ("llama-4-scout", "chunked attention"),
    ("qwen3-next", "Gated DeltaNet"),
    ("deepseek-v3", "multi-token prediction"),
    ("glm-4.5-air", "MTP layer"),
])
def test_caveats_reach_the_description(name: str, words: str) -> None:
    model = resolve_model(name, None, None)
    assert any(words in str(caveat) for caveat in model.caveats)
    assert "not modelled exactly" in model.description and words in model.description


def test_plain_models_carry_no_caveats() -> None:
    model = resolve_model("llama-3-8b", None, None)
    assert model.caveats == () and model.checkpoint == ""
    assert model.description == "Llama 3 8B (meta-llama/Meta-Llama-3-8B)"


def test_pasted_configs_carry_their_caveats_too() -> None:
    model = resolve_model(None, None, config("qwen3-next-80b-a3b"))
    assert any("Gated DeltaNet" in caveat.detail for caveat in model.caveats)


def test_each_caveat_is_an_assumption_every_renderer_prints(capsys: pytest.CaptureFixture[str]
                                                            ) -> None:
    lines = assumption_lines(EstimateRequest(model="qwen3-next-80b-a3b", task="infer"))
    assert any(line.startswith("not modelled exactly: hybrid layers (derived: 36 of 48 layers")
               for line in lines)
    assert any(line.startswith("not modelled exactly: multi-token prediction") for line in lines)
    assert main(["estimate", "--model", "qwen2.5-vl-7b", "--json"]) == 0
    fields = {a["field"] for a in json.loads(capsys.readouterr().out)["assumptions"]}
    assert "model.caveat.vision_tower" in fields


@pytest.mark.parametrize(("request_fields", "dtype"), [
    ({"model": "gpt-oss-120b", "task": "finetune", "lora_rank": 16}, "bf16"),
    ({"model": "gpt-oss-20b", "task": "finetune", "finetune_method": "qlora"}, "nf4"),
    ({"model": "kimi-k2", "task": "train", "precision": "fp16_mixed"}, "fp16"),
    ({"model": "deepseek-v3", "task": "train", "precision": "fp32"}, "fp32"),
])
def test_training_from_a_quantized_checkpoint_states_the_dtype_it_loads(
        request_fields: dict[str, Any], dtype: str) -> None:
    notes = {a.field: a for a in resolve(EstimateRequest(**request_fields)).assumptions}
    loaded = notes["weights_dtype"]
    assert (loaded.value, loaded.origin) == (dtype, "derived")
    assert "dequantized on load" in loaded.why and "dequantize=True" in loaded.source


def test_serving_keeps_the_native_format_and_16_bit_checkpoints_need_no_dtype_note() -> None:
    serving = {a.field: a for a in resolve(EstimateRequest(model="gpt-oss-120b",
                                                           task="infer")).assumptions}
    assert serving["quantization"].value == "mxfp4" and "weights_dtype" not in serving
    plain = {a.field for a in resolve(EstimateRequest(model="llama-3-8b")).assumptions}
    assert "weights_dtype" not in plain and not any(f.startswith("model.caveat") for f in plain)


# ---- the new architecture fields ----------------------------------------------------------


def test_new_blocks_round_trip_through_dict() -> None:
    for name in ("qwen3-next-80b-a3b", "qwen2.5-vl-7b", "llama-4-scout", "gpt-oss-20b"):
        arch = arch_of(name)
        assert Architecture.from_dict(arch.to_dict()) == arch


@pytest.mark.parametrize(("changes", "field"), [
    ({"mtp_layers": 99}, "arch.mtp_layers"),
    ({"linear_attention": {"full_attention_interval": 1, "key_heads": 16, "value_heads": 32,
                           "key_head_dim": 128, "value_head_dim": 128}},
     "arch.linear_attention.full_attention_interval"),
    ({"linear_attention": {"full_attention_interval": 4, "key_heads": 16, "value_heads": 24,
                           "key_head_dim": 128, "value_head_dim": 128}},
     "arch.linear_attention.value_heads"),
    ({"vision": {"kind": "clip", "layers": 1, "hidden": 8, "ffn": 8, "heads": 1}}, "arch.vision.kind"),
    ({"vision": {"kind": "llama4", "layers": 1, "hidden": 8, "ffn": 8, "heads": 1}}, "arch.vision"),
    ({"vision": {"kind": "qwen2_5_vl", "layers": 1, "hidden": 8, "ffn": 8, "heads": 1, "bias": 1}},
     "arch.vision.bias"),
])
def test_invalid_new_blocks_name_the_field(changes: dict[str, Any], field: str) -> None:
    base = {"layers": 8, "hidden": 64, "heads": 4, "ffn": 128, "vocab": 100}
    with pytest.raises(InvalidInput) as err:
        Architecture.from_dict({**base, **changes})
    assert err.value.field == field


def test_state_space_hybrids_are_refused_not_read_as_llama() -> None:
    nemotron_h = {"model_type": "nemotron_h", "hidden_size": 4096, "num_hidden_layers": 52,
                  "num_attention_heads": 32, "intermediate_size": 21504, "vocab_size": 131072,
                  "mamba_num_heads": 128, "ssm_state_size": 128,
                  "hybrid_override_pattern": "M-M-M-MM-M-M*-"}
    with pytest.raises(InvalidInput) as err:
        architecture_from_hf_config(nemotron_h)
    assert err.value.field in ("ssm_state_size", "mamba_num_heads", "hybrid_override_pattern")
    assert "not model" in err.value.message


def test_qlora_leaves_fused_moe_experts_unquantized_and_says_so() -> None:
    # transformers 5 stores Mixtral's experts as fused 3-D parameters: bitsandbytes' 4-bit
    # conversion skips them and peft's prepare_model_for_kbit_training casts them to fp32
    from engine_support import estimate_of

    from service.answers import compute_answer
    from service.core.job.request import EstimateRequest
    from service.core.model.linears import expert_weight_params
    from service.core.model.presets import lookup_preset

    request = EstimateRequest(model="mixtral-8x7b", task="finetune", finetune_method="qlora",
                              seq_len=2048, gpu="a100-80gb", gpu_count=1)
    weights = next(c for c in estimate_of(request).components if c.key == "weights")
    preset = lookup_preset("mixtral-8x7b")
    assert preset is not None
    experts = expert_weight_params(preset.arch)
    terms = weights.term_map
    assert terms["other_params"] >= experts and terms["other_bytes"] == 4
    assert weights.bytes > experts * 4
    fields = {a.field for a in compute_answer(request).answer.assumptions}
    assert "qlora.experts" in fields
