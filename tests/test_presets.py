"""Model presets: counts match the published figures, names resolve, bare sizes map as stated."""

from __future__ import annotations

import json
import math
from importlib import resources
from typing import Any

import pytest

from service.core.errors import InvalidInput, UnknownName
from service.core.model.architecture import Architecture
from service.core.model.bare_sizes import (
    MAX_SIZE,
    MIN_SIZE,
    format_count,
    generated_architecture,
    parse_size,
    resolve_bare_size,
    size_table,
)
from service.core.model.params import active_parameter_count, parameter_count
from service.core.model.presets import (
    ModelPreset,
    all_presets,
    find_preset,
    name_key,
)

PRESETS = all_presets()
BY_ID = {p.id: p for p in PRESETS}
PRESET_KEYS = [p.id for p in PRESETS]

# Published active counts that are given to two or three significant figures, and not always by
# the same convention, so they are checked at the precision they were published with:
# (how many vocab x hidden tables the figure leaves out: 0, the input embedding 1, both 2; why).
ACTIVE_AT_PUBLISHED_PRECISION: dict[str, tuple[int, str]] = {
    "deepseek-v3": (1, "paper's 37B leaves out the input embedding (36.63B without it)"),
    "deepseek-r1": (1, "DeepSeek-V3's architecture: its 37B leaves out the input embedding"),
    "deepseek-r1-0528": (1, "DeepSeek-V3's architecture: its 37B leaves out the input embedding"),
    "deepseek-v2-lite": (1, "paper's 2.4B leaves out the input embedding (2.45B)"),
    "qwen3-30b-a3b": (0, "model card truncates 3.35B to 3.3B"),
    "qwen2-57b-a14b": (0, "the name rounds 14.25B to 14B"),
    "gpt-oss-120b": (1, "model card's 5.13B counts the unembedding, not the embedding (5.133B)"),
    "gpt-oss-20b": (1, "model card's 3.61B counts the unembedding, not the embedding (3.608B)"),
    "llama-4-scout": (0, "model card rounds 17.17B to 17B"),
    "llama-4-maverick": (0, "model card rounds 17.18B to 17B"),
    "kimi-k2": (0, "model card truncates 32.86B to 32B"),
    "glm-4.5": (2, "report's 32B leaves out embedding and head (32.08B)"),
    "glm-4.5-air": (2, "report's 12B leaves out embedding and head (12.18B)"),
    "qwen3-coder-480b-a35b": (0, "model card rounds 35.47B to 35B"),
    "qwen3-next-80b-a3b": (0, "model card truncates 3.87B to 3B"),
}


def _agrees_at_precision(computed: float, published: int) -> bool:
    """True if ``published`` is ``computed`` rounded or truncated to its significant digits."""
    digits = len(str(published).rstrip("0"))
    unit = int(10 ** (len(str(published)) - digits))
    rounded = abs(computed - published) <= unit / 2
    truncated = published <= computed < published + unit
    return rounded or truncated


# ---- data files -------------------------------------------------------------------------


def _data_files() -> list[tuple[str, dict[str, Any]]]:
    folder = resources.files("service.data").joinpath("models")
    return [
        (entry.name, json.loads(entry.read_text(encoding="utf-8")))
        for entry in sorted(folder.iterdir(), key=lambda e: e.name)
        if entry.name.endswith(".json")
    ]


MODEL_FIELDS = {
    "id", "name", "hf_repo", "aliases", "published_params", "published_active_params",
    "params_source", "arch",
}  # fmt: skip
OPTIONAL_FIELDS = {"weight_format", "remote_code", "max_context"}  # absent: bf16, no code, unknown
# a published checkpoint of another preset's architecture names it and takes the rest from it
SAME_AS_FIELDS = {"id", "name", "hf_repo", "aliases", "same_as"}


def test_data_files_load_with_from_dict() -> None:
    files = _data_files()
    assert len(files) >= 8
    for name, document in files:
        assert set(document) == {"models"}, name
        for model in document["models"]:
            if "same_as" in model:
                assert SAME_AS_FIELDS <= set(model) <= SAME_AS_FIELDS | OPTIONAL_FIELDS | {
                    "params_source"}, (name, model["id"])
                assert BY_ID[model["id"]].arch.layers == BY_ID[model["same_as"]].arch.layers
                continue
            assert MODEL_FIELDS <= set(model) <= MODEL_FIELDS | OPTIONAL_FIELDS, (name, model.get("id"))
            arch = Architecture.from_dict(model["arch"])
            assert parameter_count(arch) > 0
            assert model["id"] == model["id"].lower() and " " not in model["id"]
            assert model["params_source"].strip()


def test_there_are_at_least_40_presets_with_unique_ids() -> None:
    assert len(PRESETS) >= 40
    assert len(BY_ID) == len(PRESETS)


# ---- parameter counts ---------------------------------------------------------------------


@pytest.mark.parametrize("preset_id", PRESET_KEYS)
def test_parameter_count_matches_published(preset_id: str) -> None:
    preset = BY_ID[preset_id]
    computed = parameter_count(preset.arch)
    error = (computed - preset.published_params) / preset.published_params
    assert abs(error) <= 0.005, f"{preset_id}: {computed:,} vs {preset.published_params:,}"


MOE_IDS = [p.id for p in PRESETS if p.published_active_params is not None]


@pytest.mark.parametrize("preset_id", MOE_IDS)
def test_active_parameter_count_matches_published(preset_id: str) -> None:
    preset = BY_ID[preset_id]
    published = preset.published_active_params
    assert published is not None and preset.arch.moe is not None
    computed = active_parameter_count(preset.arch)
    if preset_id in ACTIVE_AT_PUBLISHED_PRECISION:
        tables_left_out, why = ACTIVE_AT_PUBLISHED_PRECISION[preset_id]
        computed -= tables_left_out * preset.arch.vocab * preset.arch.hidden
        assert _agrees_at_precision(computed, published), f"{preset_id} ({why}): {computed:,}"
    else:
        assert abs(computed - published) / published <= 0.01, f"{preset_id}: {computed:,}"


def test_every_moe_preset_publishes_its_active_count() -> None:
    assert {p.id for p in PRESETS if p.arch.moe is not None} == set(MOE_IDS)


def test_precision_helper() -> None:
    assert _agrees_at_precision(3.353e9, 3_300_000_000)  # truncated
    assert _agrees_at_precision(36.63e9, 37_000_000_000)  # rounded
    assert not _agrees_at_precision(38.2e9, 37_000_000_000)
    assert not _agrees_at_precision(2.66e9, 2_400_000_000)
    assert not _agrees_at_precision(3.2e9, 3_300_000_000)


def test_model_quirks_are_expressed() -> None:
    gemma = BY_ID["gemma-2-9b"].arch
    assert (gemma.norms_per_layer, gemma.tied_embeddings, gemma.head_dim) == (4, True, 256)
    assert BY_ID["qwen2.5-7b"].arch.attn_bias and not BY_ID["qwen2.5-7b"].arch.attn_out_bias
    assert BY_ID["qwen3-8b"].arch.qk_norm and BY_ID["gemma-3-27b"].arch.qk_norm
    falcon = BY_ID["falcon-7b"].arch
    assert (falcon.kv_heads, falcon.norms_per_layer, falcon.parallel_residual) == (1, 1, True)
    assert not (falcon.attn_bias or falcon.mlp_bias)
    assert BY_ID["falcon-40b"].arch.norms_per_layer == 2
    neox = BY_ID["gpt-neox-20b"].arch
    assert neox.parallel_residual and neox.mlp_bias and not neox.tied_embeddings
    gpt2 = BY_ID["gpt2"].arch
    assert (gpt2.positions, gpt2.max_positions, gpt2.tied_embeddings) == ("learned", 1024, True)
    assert (gpt2.mlp, gpt2.ffn, gpt2.dropout) == ("plain", 4 * 768, 0.1)
    v3 = BY_ID["deepseek-v3"].arch
    assert v3.moe is not None and v3.mla is not None
    assert (v3.layers, v3.moe.dense_layers, v3.moe.experts, v3.moe.experts_per_token) == (
        61, 3, 256, 8,
    )  # fmt: skip
    assert v3.moe.shared_experts == 1 and v3.moe.router_bias
    assert (v3.mla.q_lora_rank, v3.mla.kv_lora_rank, v3.mla.qk_rope_head_dim) == (1536, 512, 64)
    assert BY_ID["mistral-7b-v0.1"].arch.sliding_window == 4096


def test_gemma_3_presets_are_the_language_model_only() -> None:
    for size in ("4b", "12b", "27b"):
        source = BY_ID[f"gemma-3-{size}"].params_source
        assert "vision tower" in source and "language model only" in source


# ---- names --------------------------------------------------------------------------------

ALIAS_CASES = [(p.id, name) for p in PRESETS for name in p.names]


@pytest.mark.parametrize(("preset_id", "name"), ALIAS_CASES)
def test_every_name_resolves_to_its_preset(preset_id: str, name: str) -> None:
    assert find_preset(name).id == preset_id


def test_names_do_not_collide_between_presets() -> None:
    owner: dict[str, str] = {}
    for preset in PRESETS:
        for name in preset.names:
            key = name_key(name)
            assert owner.setdefault(key, preset.id) == preset.id, (name, owner[key], preset.id)


@pytest.mark.parametrize(
    ("name", "preset_id"),
    [
        ("Llama 3 8B", "llama-3-8b"),
        ("llama3-8b", "llama-3-8b"),
        ("LLaMA-3 8b", "llama-3-8b"),
        ("meta-llama/Meta-Llama-3-8B", "llama-3-8b"),
        ("meta llama 3 8b instruct", "llama-3-8b"),
        ("Meta-Llama-3.1-70B-Instruct", "llama-3.1-70b"),
        ("meta-llama/Llama-2-7b-chat-hf", "llama-2-7b"),
        ("qwen 2.5 7b", "qwen2.5-7b"),
        ("Qwen2.5-7B-Instruct", "qwen2.5-7b"),
        ("Qwen/Qwen2.5-72B-Instruct-AWQ", "qwen2.5-72b"),
        ("qwen2-57b-a14b", "qwen2-57b-a14b"),
        ("Qwen/Qwen3-235B-A22B-Instruct-2507", "qwen3-235b-a22b"),
        ("gemma-2-9b-it", "gemma-2-9b"),
        ("google/gemma-3-27b-it", "gemma-3-27b"),
        ("Mistral-7B-Instruct-v0.3", "mistral-7b-v0.3"),
        ("mistral 7b", "mistral-7b-v0.3"),
        ("Mistral-Nemo-Instruct-2407", "mistral-nemo-12b"),
        ("mixtral 8x7b instruct", "mixtral-8x7b"),
        ("microsoft/Phi-3-mini-4k-instruct", "phi-3-mini"),
        ("microsoft/Phi-3-mini-128k-instruct", "phi-3-mini-128k"),
        ("deepseek-ai/DeepSeek-R1-0528", "deepseek-r1-0528"),
        ("DeepSeek R1", "deepseek-r1"),
        ("deepseek-ai/DeepSeek-V3.1", "deepseek-v3"),
        ("DeepSeek-V3.1-Terminus", "deepseek-v3"),
        ("openai/gpt-oss-120b", "gpt-oss-120b"),
        ("gpt-oss 20b", "gpt-oss-20b"),
        ("GPT-OSS-120B", "gpt-oss-120b"),
        ("Llama 4 Scout", "llama-4-scout"),
        ("meta-llama/Llama-4-Scout-17B-16E-Instruct", "llama-4-scout"),
        ("llama4 maverick", "llama-4-maverick"),
        ("Llama-4-Maverick-17B-128E-Instruct-FP8", "llama-4-maverick"),
        ("moonshotai/Kimi-K2-Instruct", "kimi-k2"),
        ("Kimi-K2-Instruct-0905", "kimi-k2"),
        ("kimi k2", "kimi-k2"),
        ("GLM-4.5", "glm-4.5"),
        ("glm 4.5 air", "glm-4.5-air"),
        ("zai-org/GLM-4.5-Air-FP8", "glm-4.5-air"),
        ("Qwen/Qwen3-Coder-480B-A35B-Instruct", "qwen3-coder-480b-a35b"),
        ("qwen3 coder", "qwen3-coder-480b-a35b"),
        ("Qwen/Qwen3-Next-80B-A3B-Instruct", "qwen3-next-80b-a3b"),
        ("qwen3-next", "qwen3-next-80b-a3b"),
        ("mistral large 2", "mistral-large-2"),
        ("mistralai/Mistral-Large-Instruct-2407", "mistral-large-2"),
        ("Qwen/Qwen2.5-VL-7B-Instruct", "qwen2.5-vl-7b"),
        ("qwen2.5-vl-72b-instruct", "qwen2.5-vl-72b"),
        ("Qwen2.5 VL 32B", "qwen2.5-vl-32b"),
        ("GPT-2 XL", "gpt2-xl"),
        ("gpt-3", "gpt-3-175b"),
        ("EleutherAI/pythia-6.9b-deduped", "pythia-6.9b"),
        ("  Llama 3.3 70B Instruct  ", "llama-3.3-70b"),
    ],
)
def test_spelling_variants_resolve(name: str, preset_id: str) -> None:
    assert find_preset(name).id == preset_id


def test_unknown_name_gives_close_suggestions() -> None:
    with pytest.raises(UnknownName) as caught:
        find_preset("llama 3 9b")
    error = caught.value
    assert error.kind == "model" and error.name == "llama 3 9b"
    assert 1 <= len(error.suggestions) <= 3
    assert "llama-3-8b" in error.suggestions
    assert all(s in BY_ID for s in error.suggestions)


@pytest.mark.parametrize("name", ["", "   ", "claude-opus", "!!!"])
def test_garbage_names_raise_unknown_name(name: str) -> None:
    with pytest.raises(UnknownName) as caught:
        find_preset(name)
    assert len(caught.value.suggestions) <= 3


def test_presets_are_immutable_and_listing_is_a_copy() -> None:
    first = all_presets()
    first.clear()
    assert len(all_presets()) == len(PRESETS)
    preset: ModelPreset = PRESETS[0]
    with pytest.raises(AttributeError):
        preset.id = "changed"  # type: ignore[misc]
    assert preset.arch.name == preset.id


# ---- bare sizes ---------------------------------------------------------------------------

TABLE = size_table()


@pytest.mark.parametrize("entry", TABLE, ids=[e.size for e in TABLE])
def test_listed_sizes_map_to_their_standard_shape(entry: Any) -> None:
    arch, description = resolve_bare_size(entry.size)
    assert arch == entry.arch
    assert description.startswith(f"{entry.size} → {entry.basis} shape")
    assert f"{arch.layers} layers" in description and f"hidden {arch.hidden}" in description
    # A size name is nominal: Llama 2 7B has 6.74B parameters, 3.7% under "7B".
    assert abs(parameter_count(arch) - entry.params) / entry.params <= 0.04


@pytest.mark.parametrize(
    ("size", "preset_id"),
    [("7B", "llama-2-7b"), ("8B", "llama-3-8b"), ("13B", "llama-2-13b"), ("70B", "llama-2-70b"),
     ("175B", "gpt-3-175b"), ("405B", "llama-3.1-405b")],
)  # fmt: skip
def test_common_sizes_map_to_the_stated_presets(size: str, preset_id: str) -> None:
    assert resolve_bare_size(size)[0] == BY_ID[preset_id].arch


@pytest.mark.parametrize(
    ("size", "layers", "hidden"),
    [("125M", 12, 768), ("350M", 24, 1024), ("760M", 24, 1536), ("1.3B", 24, 2048),
     ("2.7B", 32, 2560), ("6.7B", 32, 4096)],
)  # fmt: skip
def test_gpt3_paper_sizes(size: str, layers: int, hidden: int) -> None:
    arch, description = resolve_bare_size(size)
    assert (arch.layers, arch.hidden, arch.vocab, arch.max_positions) == (layers, hidden, 50257, 2048)
    assert "GPT-3" in description


@pytest.mark.parametrize("value", ["7B", "7b", "7 B", "7.0B", "7e9", 7e9, 7_000_000_000, "7 billion", "7", 7])
def test_size_spellings(value: str | float) -> None:
    assert parse_size(value) == pytest.approx(7e9)
    assert resolve_bare_size(value)[0] == BY_ID["llama-2-7b"].arch


def test_size_units() -> None:
    assert parse_size("125M") == pytest.approx(125e6)
    assert parse_size("1.5T") == pytest.approx(1.5e12)
    assert parse_size("1,300,000,000") == pytest.approx(1.3e9)
    assert parse_size("350m params") == pytest.approx(350e6)


@pytest.mark.parametrize("value", ["", "seven B", "7X", "-7B", "0", "1e400", True, None, "1K", "50T"])
def test_bad_sizes_raise_invalid_input(value: Any) -> None:
    with pytest.raises(InvalidInput):
        resolve_bare_size(value)


GENERATED = [MIN_SIZE * (MAX_SIZE / MIN_SIZE) ** (i / 60) for i in range(61)]
GENERATED += [1e9, 3e9, 14e9, 30e9, 34e9, 40e9, 100e9, 300e9, 1e12]


@pytest.mark.parametrize("count", GENERATED, ids=[format_count(c) for c in GENERATED])
def test_other_sizes_get_a_llama_shape_within_2_percent(count: float) -> None:
    arch = generated_architecture(count)
    total = parameter_count(arch)
    assert abs(total - count) / count <= 0.02
    assert arch.mlp == "gated" and arch.norm == "rmsnorm" and not arch.tied_embeddings
    assert arch.vocab == 32000 and arch.ffn % 256 == 0
    assert arch.head_dim == (128 if arch.hidden >= 1024 else 64)
    assert arch.kv_heads == (8 if count >= 30e9 else arch.heads)
    if count >= 1e9:
        assert 2.0 <= arch.ffn / arch.hidden <= 4.0
        assert 0.4 <= 100 * arch.layers / arch.hidden <= 2.5  # depth/width near standard models


@pytest.mark.parametrize("text", ["30B", "1B", "34b", "500M", "2.5T"])
def test_generated_sizes_say_what_was_assumed(text: str) -> None:
    arch, description = resolve_bare_size(text)
    assert description.startswith(f"{text.upper()} → no standard model of this size")
    assert f"{arch.layers} layers" in description and "SwiGLU" in description
    assert math.isclose(parameter_count(arch), parse_size(text), rel_tol=0.02)
