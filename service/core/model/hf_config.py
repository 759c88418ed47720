"""Convert a Hugging Face ``config.json`` (already parsed into a dict) into an ``Architecture``.

Dispatch is on ``model_type``, then on ``architectures[0]``; each family is read the way its
``transformers`` modeling file reads it (``hf_config_families``, ``hf_config_moe``). Multimodal
wrappers whose language model sits in ``text_config`` (Gemma 3, Llama 4, LLaVA-style) are read
there; the vision towers of Qwen2.5-VL and Llama 4 are read from ``vision_config`` (``hf_vision``).
A config of an unknown type that has the five Llama keys is read as Llama. Every problem is an
``InvalidInput`` that names the config key at fault.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from service.core.errors import InvalidInput
from service.core.model import hf_families as fam
from service.core.model import hf_moe as moe
from service.core.model.architecture import Architecture
from service.core.model.hf_hybrid import qwen3_next
from service.core.model.hf_reader import ConfigReader
from service.core.model.hf_vision import qwen2_5_vl, vision_tower

Builder = Callable[[ConfigReader], fam.Fields]

_BUILDERS: dict[str, Builder] = {
    "llama": fam.llama,
    "mistral": fam.mistral,
    "mixtral": moe.mixtral,
    "qwen2": fam.qwen2,
    "qwen2_moe": moe.qwen2_moe,
    "qwen3": fam.qwen3,
    "qwen3_moe": moe.qwen3_moe,
    "gemma": fam.gemma,
    "gemma2": fam.gemma2,
    "gemma3": fam.gemma3_text,  # only reached for a flattened config; see text_config below
    "gemma3_text": fam.gemma3_text,
    "phi3": fam.phi3,
    "phi": fam.phi,
    "gpt2": fam.gpt2,
    "gpt_neox": fam.gpt_neox,
    "falcon": fam.falcon,
    "refinedweb": partial(fam.falcon, refined_web="refinedweb"),  # original Falcon-40B config
    "refinedwebmodel": partial(fam.falcon, refined_web="refinedwebmodel"),  # original Falcon-7B
    "deepseek_v2": partial(moe.deepseek, version=2),
    "deepseek_v3": partial(moe.deepseek, version=3),
    # Kimi K2: the repo's DeepseekV3ForCausalLM (remote code), one nn.Linear MLP per expert
    "kimi_k2": partial(moe.deepseek, version=3, fused_experts=False),
    "glm4_moe": moe.glm4_moe,
    "gpt_oss": moe.gpt_oss,
    "llama4": moe.llama4,  # only reached for a flattened config; see text_config below
    "llama4_text": moe.llama4,
    "qwen3_next": qwen3_next,
    "qwen2_5_vl": qwen2_5_vl,
    "qwen2_5_vl_text": qwen2_5_vl,
    "olmo2": fam.olmo2,
    "starcoder2": fam.starcoder2,
}

_ARCHITECTURES: dict[str, str] = {
    "LlamaForCausalLM": "llama",
    "MistralForCausalLM": "mistral",
    "MixtralForCausalLM": "mixtral",
    "Qwen2ForCausalLM": "qwen2",
    "Qwen2MoeForCausalLM": "qwen2_moe",
    "Qwen3ForCausalLM": "qwen3",
    "Qwen3MoeForCausalLM": "qwen3_moe",
    "GemmaForCausalLM": "gemma",
    "Gemma2ForCausalLM": "gemma2",
    "Gemma3ForCausalLM": "gemma3_text",
    "Gemma3ForConditionalGeneration": "gemma3",
    "Phi3ForCausalLM": "phi3",
    "PhiForCausalLM": "phi",
    "GPT2LMHeadModel": "gpt2",
    "GPTNeoXForCausalLM": "gpt_neox",
    "FalconForCausalLM": "falcon",
    "RWForCausalLM": "refinedwebmodel",
    "DeepseekV2ForCausalLM": "deepseek_v2",
    "DeepseekV3ForCausalLM": "deepseek_v3",
    "Glm4MoeForCausalLM": "glm4_moe",
    "GptOssForCausalLM": "gpt_oss",
    "Llama4ForCausalLM": "llama4_text",
    "Llama4ForConditionalGeneration": "llama4",
    "Qwen3NextForCausalLM": "qwen3_next",
    "Qwen2_5_VLForConditionalGeneration": "qwen2_5_vl",
    "Olmo2ForCausalLM": "olmo2",
    "Starcoder2ForCausalLM": "starcoder2",
}

# Model types that share a modeling file with another (the ``family`` the hf profile reads).
_FAMILY = {"refinedweb": "falcon", "refinedwebmodel": "falcon", "gemma3": "gemma3_text",
           "kimi_k2": "deepseek_v3", "llama4_text": "llama4", "qwen2_5_vl_text": "qwen2_5_vl"}
# Types that only name the text part of a multimodal config (the top level says the rest).
_TEXT_PARTS = ("llama4_text", "qwen2_5_vl_text", "gemma3_text")

SUPPORTED_MODEL_TYPES: tuple[str, ...] = tuple(
    sorted(k for k in _BUILDERS if not k.startswith("refinedweb") and k not in _TEXT_PARTS[:2])
)
_ACCEPTED = "a Hugging Face config.json with model_type one of " + ", ".join(SUPPORTED_MODEL_TYPES)
_LLAMA_KEYS = (
    "num_hidden_layers",
    "hidden_size",
    "num_attention_heads",
    "intermediate_size",
    "vocab_size",
)
_HF_KEYS = frozenset(
    (
        *_LLAMA_KEYS,
        *("num_key_value_heads", "max_position_embeddings", "n_embd", "n_layer", "n_head"),
        *("torch_dtype", "transformers_version", "_name_or_path", "rms_norm_eps", "rope_theta"),
    )
)
_LAYER_KEYS = ("num_hidden_layers", "n_layer")
# Keys of state-space (Mamba) and other recurrent hybrids whose layers are not modelled
# (Jamba, Nemotron-H, Granite 4.0-H, Falcon-H1, Zamba2, Bamba, Kimi Linear): such a config is
# refused rather than read as a Llama whose every layer is attention.
_UNMODELLED_KEYS = (
    "ssm_state_size", "mamba_d_state", "mamba_num_heads", "mamba_n_heads", "mamba_expand",
    "hybrid_override_pattern", "layers_block_type", "attn_layer_period", "linear_attn_config",
)


def looks_like_hf_config(data: object) -> bool:
    """True for a pasted ``config.json`` rather than our own architecture fields."""
    if not isinstance(data, dict):
        return False
    if any(key in data for key in ("model_type", "architectures", "text_config")):
        return True
    return len(_HF_KEYS.intersection(data)) >= 2


def architecture_from_hf_config(config: dict[str, Any]) -> Architecture:
    """The ``Architecture`` a Hugging Face ``config.json`` describes (pure; no I/O)."""
    if not isinstance(config, dict):
        raise InvalidInput("arch", f"a config.json must be a JSON object, got {config!r}", _ACCEPTED)
    body, prefix = config, ""
    text = config.get("text_config")
    if text is not None and not any(key in config for key in _LAYER_KEYS):
        if not isinstance(text, dict):
            raise InvalidInput("text_config", "must be a JSON object", "the language model's config")
        body, prefix = text, "text_config."
    reader = ConfigReader(body, prefix)
    kind = _model_type(body, config, prefix)
    builder = _BUILDERS.get(kind) if kind else None
    if builder is None:
        _refuse_unmodelled(reader, kind)
        missing = [reader.key(key) for key in _LLAMA_KEYS if not reader.has(key)]
        if missing:
            shown = f"model_type {kind!r} is not supported" if kind else "no model_type given"
            message = f"{shown}, and the config lacks {', '.join(missing)} to read it as Llama"
            raise InvalidInput("arch", message, _ACCEPTED)
        builder = fam.llama  # an unknown model type with the usual keys: read it as Llama
    family = _FAMILY.get(kind, kind) if builder is _BUILDERS.get(kind) else "llama"
    fields = builder(reader) | {"family": family} | vision_tower(config, family)
    return fam.make(reader, fields, _name(config, kind))


def _refuse_unmodelled(reader: ConfigReader, kind: str) -> None:
    for key in _UNMODELLED_KEYS:
        if key in reader.config:
            shown = f"model_type {kind!r}" if kind else "this config"
            raise InvalidInput(
                reader.key(key),
                f"{shown} has state-space or recurrent layers, which fitcheck does not model yet "
                "(their per-sequence state and weights would be guessed)",
                "a transformer config.json; hybrids with Gated DeltaNet layers: model_type "
                "qwen3_next")


def _model_type(body: dict[str, Any], top: dict[str, Any], prefix: str) -> str:
    """The first known type among the (text) config's ``model_type``, the top-level one, and
    their ``architectures[0]``; else the declared type (for the error), else ""."""
    sources = [(body, prefix)] if body is top else [(body, prefix), (top, "")]
    candidates: list[str] = []
    for data, where in sources:
        value = data.get("model_type")
        if value is None:
            continue
        if not isinstance(value, str):
            raise InvalidInput(f"{where}model_type", f"must be a string, got {value!r}", _ACCEPTED)
        candidates.append(value.lower())
    for data, where in sources:
        classes = data.get("architectures")
        if classes is None:
            continue
        if not isinstance(classes, list) or not all(isinstance(c, str) for c in classes):
            raise InvalidInput(
                f"{where}architectures", f"must be a list of class names, got {classes!r}",
                '["LlamaForCausalLM"]',
            )
        if classes and classes[0] in _ARCHITECTURES:
            candidates.append(_ARCHITECTURES[classes[0]])
    known = [kind for kind in candidates if kind in _BUILDERS]
    return known[0] if known else (candidates[0] if candidates else "")


def _name(config: dict[str, Any], kind: str) -> str:
    path = config.get("_name_or_path")
    if isinstance(path, str) and path.strip():
        return path.strip()
    return kind or "hf-config"
