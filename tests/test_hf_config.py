"""Hugging Face config.json -> Architecture: real published configs, published counts, errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from service.core.errors import InvalidInput
from service.core.model.architecture import Architecture
from service.core.model.hf_config import (
    SUPPORTED_MODEL_TYPES,
    architecture_from_hf_config,
    looks_like_hf_config,
)
from service.core.model.params import active_parameter_count, parameter_count

FIXTURES = Path(__file__).parent / "fixtures" / "hf_configs"


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text())
    return data


def convert(name: str, **changes: Any) -> Architecture:
    return architecture_from_hf_config(load(name) | changes)


# fixture, published total parameters, source of that figure.
# "hub" = the parameter count the Hugging Face model page shows from the safetensors files.
PUBLISHED_TOTALS: list[tuple[str, float, str]] = [
    ("llama-3-8b", 8.03e9, "hub meta-llama/Meta-Llama-3-8B: 8.03B"),
    ("llama-3.2-1b", 1.24e9, "hub meta-llama/Llama-3.2-1B: 1.24B (tied embeddings)"),
    ("mistral-7b-v0.1", 7.24e9, "hub mistralai/Mistral-7B-v0.1: 7.24B"),
    ("mixtral-8x7b", 46.7e9, "Mistral AI, 'Mixtral of experts' (2023): 46.7B total"),
    ("qwen2.5-7b", 7.61e9, "Qwen2.5-7B model card: 7.61B"),
    ("qwen3-8b", 8.2e9, "Qwen3-8B model card: 8.2B"),
    ("qwen3-30b-a3b", 30.5e9, "Qwen3-30B-A3B model card: 30.5B total"),
    ("qwen1.5-moe-a2.7b", 14.3e9, "Qwen1.5-MoE-A2.7B model card: 14.3B total"),
    ("gemma-7b", 8_538_074_112, "Gemma report (2024) table 2: 786,825,216 + 7,751,248,896"),
    ("gemma-2-9b", 9_241_705_984, "Gemma 2 report (2024) table 2: 917,504,000 + 8,324,201,984"),
    ("gemma-3-1b", 1_000e6, "Gemma 3 report (2025) table 1: 302M + 698M"),
    # Text model only: the report lists the 417M vision encoder separately; its 1,416M
    # embedding figure also holds the 6M image-to-text projection.
    ("gemma-3-27b", 27_016e6, "Gemma 3 report (2025) table 1: 1,416M + 25,600M"),
    ("phi-3-mini-4k", 3.82e9, "hub microsoft/Phi-3-mini-4k-instruct: 3.82B"),
    ("phi-2", 2.78e9, "hub microsoft/phi-2: 2.78B"),
    ("gpt2", 124_439_808, "hub openai-community/gpt2: 124M (124,439,808)"),
    ("pythia-1.4b", 1_414_647_808, "Pythia (Biderman et al. 2023) table: 1,414,647,808"),
    # The hub shows 7.22B / 41.8B for Falcon: its safetensors hold lm_head.weight as well as
    # the tied embedding it equals (65024 x 4544 = 0.295B, 65024 x 8192 = 0.533B).
    ("falcon-7b", 7.22e9 - 65024 * 4544, "hub tiiuae/falcon-7b 7.22B less the tied lm_head copy"),
    ("falcon-7b-rw", 7.22e9 - 65024 * 4544, "as falcon-7b (original RefinedWebModel config)"),
    ("falcon-40b", 41.8e9 - 65024 * 8192, "hub tiiuae/falcon-40b 41.8B less the tied lm_head copy"),
    ("falcon-40b-rw", 41.8e9 - 65024 * 8192, "as falcon-40b (original RefinedWeb config)"),
    # The hub's 685B adds the 14B multi-token-prediction module, which inference does not load.
    ("deepseek-v3", 671e9, "DeepSeek-V3 report (2024) and model card: 671B total"),
    ("deepseek-v2-lite", 15.7e9, "DeepSeek-V2 report (2024): V2-Lite 15.7B total"),
    ("olmo-2-7b", 7.30e9, "hub allenai/OLMo-2-1124-7B: 7.3B"),
    ("starcoder2-3b", 3.03e9, "hub bigcode/starcoder2-3b: 3.03B"),
    # DeepSeek-R1 and V3.1 keep V3's architecture; their hub totals add the MTP layer.
    ("deepseek-r1", 671e9, "DeepSeek-R1 model card: 671B total, 37B activated"),
    ("deepseek-v3.1", 671e9, "DeepSeek-V3.1 model card: 671B total, 37B activated"),
    ("kimi-k2", 1_026_408_235_864, "hub moonshotai/Kimi-K2-Instruct safetensors total (card: 1T)"),
    ("gpt-oss-120b", 116_829_156_672, "hub openai/gpt-oss-120b; model card 116.83B"),
    ("gpt-oss-20b", 20_914_757_184, "hub openai/gpt-oss-20b; model card 20.91B"),
    ("qwen3-coder-480b-a35b", 480e9, "Qwen3-Coder-480B-A35B model card: 480B total"),
    ("qwen3-next-80b-a3b", 80e9, "Qwen3-Next-80B-A3B model card: 80B total (hub 81.32B adds MTP)"),
    ("qwen2.5-vl-7b", 8_292_166_656, "hub Qwen/Qwen2.5-VL-7B-Instruct: 8,292,166,656 (vision incl.)"),
    ("llama-4-scout", 108_641_793_536, "hub meta-llama/Llama-4-Scout-17B-16E-Instruct (vision incl.)"),
    # The hub's 110,468,824,832 adds the MTP layer and its embedding and head copies; INTELLECT-3
    # (same architecture, no MTP layer) is 106,852,251,264 on the hub.
    ("glm-4.5-air", 106_852_251_264, "hub PrimeIntellect/INTELLECT-3 (GLM-4.5-Air shape, no MTP)"),
]

# Published activated parameters. They come to two or three significant figures, and labs
# differ on whether the input embedding counts (ours does), hence the wider tolerance where
# the figure is "3.3B" or "37B".
PUBLISHED_ACTIVE: list[tuple[str, float, float, str]] = [
    ("mixtral-8x7b", 12.9e9, 0.005, "Mistral AI, 'Mixtral of experts': 12.9B per token"),
    ("qwen1.5-moe-a2.7b", 2.7e9, 0.005, "Qwen1.5-MoE-A2.7B model card: 2.7B activated"),
    ("qwen3-30b-a3b", 3.3e9, 0.02, "Qwen3-30B-A3B model card: 3.3B activated"),
    ("deepseek-v3", 37e9, 0.02, "DeepSeek-V3 report: 37B activated per token"),
    ("deepseek-r1", 37e9, 0.02, "DeepSeek-R1 model card: 37B activated"),
    ("kimi-k2", 32e9, 0.03, "Kimi K2 model card: 32B activated"),
    ("qwen3-coder-480b-a35b", 35e9, 0.02, "Qwen3-Coder model card: 35B activated"),
    ("llama-4-scout", 17e9, 0.02, "Llama 4 model card: 17B activated"),
]


def test_every_fixture_has_a_published_figure() -> None:
    assert {p.stem for p in FIXTURES.glob("*.json")} == {row[0] for row in PUBLISHED_TOTALS}


@pytest.mark.parametrize(("name", "published", "source"), PUBLISHED_TOTALS)
def test_total_parameters_match_published(name: str, published: float, source: str) -> None:
    total = parameter_count(convert(name))
    assert abs(total - published) / published < 0.005, (name, total, published, source)


@pytest.mark.parametrize(("name", "published", "tolerance", "source"), PUBLISHED_ACTIVE)
def test_active_parameters_match_published(
    name: str, published: float, tolerance: float, source: str
) -> None:
    active = active_parameter_count(convert(name))
    assert abs(active - published) / published < tolerance, (name, active, published, source)


def test_every_supported_model_type_has_a_fixture() -> None:
    covered = set()
    for path in FIXTURES.glob("*.json"):
        config = load(path.stem)
        covered.add(config["model_type"].lower())
        covered.add(config.get("text_config", {}).get("model_type", ""))
    assert set(SUPPORTED_MODEL_TYPES) <= covered


def test_names_come_from_name_or_path_else_model_type() -> None:
    assert convert("llama-3-8b").name == "meta-llama/Meta-Llama-3-8B"
    assert convert("gpt2").name == "gpt2"


def test_llama_reads_gqa_and_ties() -> None:
    arch = convert("llama-3-8b")
    assert (arch.layers, arch.hidden, arch.heads, arch.kv_heads, arch.ffn) == (32, 4096, 32, 8, 14336)
    assert not arch.tied_embeddings and arch.mlp == "gated" and arch.norm == "rmsnorm"
    assert convert("llama-3.2-1b").tied_embeddings
    assert convert("llama-3-8b", attention_bias=True).attn_out_bias


def test_qwen_biases_and_norms() -> None:
    qwen2 = convert("qwen2.5-7b")
    assert qwen2.attn_bias and not qwen2.attn_out_bias and not qwen2.qk_norm
    qwen3 = convert("qwen3-8b")
    assert qwen3.qk_norm and not qwen3.attn_bias and qwen3.head_dim == 128


def test_qwen_window_only_when_enabled() -> None:
    assert convert("qwen2.5-7b").sliding_window == 0
    arch = convert("qwen2.5-7b", use_sliding_window=True, sliding_window=4096, max_window_layers=21)
    assert arch.sliding_window == 4096 and arch.sliding_window_layers == pytest.approx(7 / 28)


def test_gemma_families() -> None:
    gemma = convert("gemma-7b")
    assert gemma.tied_embeddings and gemma.head_dim == 256 and gemma.norms_per_layer == 2
    gemma2 = convert("gemma-2-9b")
    assert gemma2.norms_per_layer == 4 and gemma2.sliding_window == 4096
    assert gemma2.sliding_window_layers == 0.5 and not gemma2.qk_norm
    gemma3 = convert("gemma-3-27b")  # multimodal: text_config, vocab from Gemma3TextConfig
    assert gemma3.vocab == 262_208 and gemma3.qk_norm and gemma3.head_dim == 128
    assert gemma3.sliding_window == 1024 and gemma3.sliding_window_layers == pytest.approx(52 / 62)
    assert convert("gemma-3-1b").sliding_window_layers == pytest.approx(22 / 26)


def test_layer_types_list_sets_the_window_share() -> None:
    types = ["sliding_attention", "full_attention"] * 13
    arch = convert("gemma-3-1b", layer_types=types)
    assert arch.sliding_window_layers == 0.5


def test_mistral_phi3_starcoder2_window_every_layer() -> None:
    for name, size in (("mistral-7b-v0.1", 4096), ("phi-3-mini-4k", 2047), ("starcoder2-3b", 4096)):
        arch = convert(name)
        assert (arch.sliding_window, arch.sliding_window_layers) == (size, 1.0)
    assert convert("mixtral-8x7b").sliding_window == 0  # null
    assert convert("mistral-7b-v0.1", sliding_window=None).sliding_window == 0
    absent = load("mistral-7b-v0.1")
    del absent["sliding_window"]  # MistralConfig's default applies
    assert architecture_from_hf_config(absent).sliding_window == 4096


def test_gpt2() -> None:
    arch = convert("gpt2")
    assert arch.positions == "learned" and arch.max_positions == 1024
    assert arch.ffn == 4 * 768 and arch.mlp == "plain" and arch.norm == "layernorm"
    assert arch.attn_bias and arch.attn_out_bias and arch.mlp_bias and arch.tied_embeddings
    assert arch.dropout == 0.1
    assert convert("gpt2", n_inner=1000).ffn == 1000
    assert convert("gpt2", resid_pdrop=0.0, attn_pdrop=0.0, embd_pdrop=0.0).dropout == 0.0


def test_gpt_neox_and_phi_are_parallel() -> None:
    neox = convert("pythia-1.4b")
    assert neox.parallel_residual and neox.attn_bias and neox.mlp_bias and neox.mlp == "plain"
    assert not convert("pythia-1.4b", use_parallel_residual=False).parallel_residual
    phi = convert("phi-2")
    assert phi.parallel_residual and phi.norms_per_layer == 1 and phi.dropout == 0.1


def test_falcon_old_and_new_decoder() -> None:
    old = convert("falcon-7b")
    assert (old.kv_heads, old.norms_per_layer, old.parallel_residual) == (1, 1, True)
    new = convert("falcon-40b")
    assert (new.kv_heads, new.norms_per_layer, new.parallel_residual) == (8, 2, True)
    assert convert("falcon-7b-rw") == old and convert("falcon-40b-rw") == new
    serial = convert("falcon-7b", parallel_attn=False, multi_query=False, alibi=True, bias=True)
    assert (serial.kv_heads, serial.norms_per_layer, serial.parallel_residual) == (71, 2, False)
    assert serial.positions == "alibi" and serial.attn_bias and serial.mlp_bias


def test_moe_fields() -> None:
    mixtral = convert("mixtral-8x7b")
    assert mixtral.moe is not None and (mixtral.moe.experts, mixtral.moe.experts_per_token) == (8, 2)
    assert mixtral.moe.expert_ffn == 14336 and mixtral.moe_layers == 32
    qwen = convert("qwen1.5-moe-a2.7b").moe
    assert qwen is not None and qwen.shared_expert_ffn == 5632 and qwen.shared_expert_gate
    qwen3 = convert("qwen3-30b-a3b").moe
    assert qwen3 is not None and qwen3.expert_ffn == 768 and qwen3.shared_experts == 0


def test_qwen_moe_layer_choice() -> None:
    every_other = convert("qwen1.5-moe-a2.7b", decoder_sparse_step=2)
    assert every_other.moe_layers == 12 and every_other.dense_layers == 12 and every_other.ffn == 5632
    leading = convert("qwen3-30b-a3b", mlp_only_layers=[0, 1])
    assert leading.moe is not None and leading.moe.dense_layers == 2 and leading.moe_layers == 46
    middle = convert("qwen3-30b-a3b", mlp_only_layers=[7, 30])
    assert middle.moe_layers == 46 and middle.ffn == 6144
    assert convert("qwen3-30b-a3b", mlp_only_layers=list(range(48))).moe is None


def test_deepseek_mla_and_router_bias() -> None:
    v3 = convert("deepseek-v3")
    assert v3.mla is not None and v3.mla.q_lora_rank == 1536 and v3.mla.kv_lora_rank == 512
    assert v3.moe is not None and v3.moe.dense_layers == 3 and v3.moe.router_bias
    assert v3.moe.shared_experts == 1 and v3.ffn == 18432
    all_dense = convert("deepseek-v3", first_k_dense_replace=61)  # as modeling_deepseek_v3
    assert all_dense.moe is None and all_dense.mla is not None
    lite = convert("deepseek-v2-lite")
    assert lite.mla is not None and lite.mla.q_lora_rank == 0  # null: no query compression
    assert lite.moe is not None and not lite.moe.router_bias and lite.moe.shared_experts == 2


def test_architectures_fallback_without_model_type() -> None:
    config = load("qwen2.5-7b")
    del config["model_type"]
    assert architecture_from_hf_config(config).attn_bias  # read as Qwen2, not as Llama


def test_unknown_model_type_with_llama_keys_converts() -> None:
    config = load("llama-3-8b") | {"model_type": "acme_lm", "architectures": ["AcmeForCausalLM"]}
    arch = architecture_from_hf_config(config)
    assert parameter_count(arch) == parameter_count(convert("llama-3-8b"))


def test_unknown_model_type_without_keys_is_rejected() -> None:
    with pytest.raises(InvalidInput) as err:
        architecture_from_hf_config({"model_type": "acme_lm", "d_model": 512})
    assert err.value.field == "arch" and "acme_lm" in err.value.message
    assert "llama" in err.value.accepted and "deepseek_v3" in err.value.accepted


@pytest.mark.parametrize(
    ("name", "changes", "field"),
    [
        ("llama-3-8b", {"num_hidden_layers": None}, "num_hidden_layers"),
        ("llama-3-8b", {"hidden_size": "4096"}, "hidden_size"),
        ("llama-3-8b", {"vocab_size": 32000.5}, "vocab_size"),
        ("llama-3-8b", {"num_attention_heads": True}, "num_attention_heads"),
        ("llama-3-8b", {"intermediate_size": -1}, "intermediate_size"),
        ("llama-3-8b", {"num_key_value_heads": 7}, "num_key_value_heads"),
        ("llama-3-8b", {"num_attention_heads": 30}, "num_attention_heads"),
        ("llama-3-8b", {"tie_word_embeddings": "yes"}, "tie_word_embeddings"),
        ("llama-3-8b", {"attention_dropout": 1.5}, "attention_dropout"),
        ("llama-3-8b", {"num_hidden_layers": 10**6}, "num_hidden_layers"),
        ("llama-3-8b", {"model_type": 7}, "model_type"),
        ("llama-3-8b", {"architectures": "LlamaForCausalLM"}, "architectures"),
        ("gpt2", {"n_embd": None}, "n_embd"),
        ("mixtral-8x7b", {"num_local_experts": None}, "num_local_experts"),
        ("mixtral-8x7b", {"num_experts_per_tok": 9}, "num_experts_per_tok"),
        ("qwen3-30b-a3b", {"mlp_only_layers": "none"}, "mlp_only_layers"),
        ("deepseek-v3", {"kv_lora_rank": "512"}, "kv_lora_rank"),
        ("deepseek-v3", {"first_k_dense_replace": -1}, "first_k_dense_replace"),
        ("gemma-3-27b", {"text_config": []}, "text_config"),
        ("falcon-40b", {"num_kv_heads": 3}, "num_kv_heads"),
    ],
)
def test_bad_values_name_the_config_key(name: str, changes: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidInput) as err:
        convert(name, **changes)
    assert err.value.field == field, err.value


def test_nested_text_config_errors_are_prefixed() -> None:
    config = load("gemma-3-27b")
    config["text_config"] = config["text_config"] | {"hidden_size": "big"}
    with pytest.raises(InvalidInput) as err:
        architecture_from_hf_config(config)
    assert err.value.field == "text_config.hidden_size"


@pytest.mark.parametrize("garbage", [None, [], "config.json", 42, {}, {"model_type": None}])
def test_garbage_is_invalid_input(garbage: Any) -> None:
    with pytest.raises(InvalidInput):
        architecture_from_hf_config(garbage)


def test_looks_like_hf_config() -> None:
    assert all(looks_like_hf_config(load(p.stem)) for p in FIXTURES.glob("*.json"))
    assert looks_like_hf_config({"hidden_size": 4096, "num_hidden_layers": 32})
    ours = {"layers": 32, "hidden": 4096, "heads": 32, "vocab": 32000, "ffn": 11008}
    assert not looks_like_hf_config(ours)
    assert not looks_like_hf_config("config.json") and not looks_like_hf_config([])
