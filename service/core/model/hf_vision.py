"""Vision-language configs: Qwen2.5-VL's language model, and the vision towers of Qwen2.5-VL
and Llama 4 read from ``vision_config``.

Only the towers' weights are counted (``vision.py``); a tower of another family (Gemma 3's
SigLIP, LLaVA's CLIP) is left out, as the Gemma 3 presets state.
"""

from __future__ import annotations

from typing import Any

from service.core.errors import InvalidInput
from service.core.model.arch_parts import VisionTower, validate_vision
from service.core.model.hf_families import Fields, qwen2
from service.core.model.hf_reader import ConfigReader

# model_type (text or top level) -> the vision tower family whose vision_config is read.
VISION_FAMILIES = {"qwen2_5_vl": "qwen2_5_vl", "qwen2_5_vl_text": "qwen2_5_vl",
                   "llama4": "llama4", "llama4_text": "llama4"}


def qwen2_5_vl(r: ConfigReader) -> Fields:
    """Qwen2.5-VL's language model (``modeling_qwen2_5_vl.Qwen2_5_VLTextModel``): Qwen2's
    decoder (bias on q, k, v) with multimodal rotary positions (M-RoPE, no parameters)."""
    return qwen2(r)


def _qwen_tower(r: ConfigReader) -> VisionTower:
    """``Qwen2_5_VLVisionConfig``: depth 32, intermediate_size 3420, num_heads 16, patch 14,
    temporal_patch_size 2, spatial_merge_size 2, in_chans 3 unless stated."""
    return VisionTower(
        kind="qwen2_5_vl",
        layers=r.read_int("vision.layers", "depth", default=32),
        hidden=r.read_int("vision.hidden", "hidden_size"),
        ffn=r.read_int("vision.ffn", "intermediate_size", default=3420),
        heads=r.read_int("vision.heads", "num_heads", default=16),
        patch_size=r.read_int("vision.patch_size", "patch_size", "spatial_patch_size", default=14),
        channels=r.read_int("vision.channels", "in_chans", "in_channels", default=3),
        temporal_patch=r.read_int("vision.temporal_patch", "temporal_patch_size", default=2),
        merge=r.read_int("vision.merge", "spatial_merge_size", default=2),
    )


def _llama4_tower(r: ConfigReader) -> VisionTower:
    """``Llama4VisionConfig``: the shape keys are required; pixel_shuffle_ratio 0.5 merges
    2 x 2 patches into one token; the adapter and projector are ``vision_output_dim`` wide."""
    ratio = r.read_float("vision.merge", "pixel_shuffle_ratio", default=0.5)
    if not 0 < ratio <= 1:
        raise InvalidInput(r.key("pixel_shuffle_ratio"), f"{ratio} is not in (0, 1]", "0.5")
    return VisionTower(
        kind="llama4",
        layers=r.read_int("vision.layers", "num_hidden_layers"),
        hidden=r.read_int("vision.hidden", "hidden_size"),
        ffn=r.read_int("vision.ffn", "intermediate_size"),
        heads=r.read_int("vision.heads", "num_attention_heads"),
        patch_size=r.read_int("vision.patch_size", "patch_size"),
        channels=r.read_int("vision.channels", "num_channels", default=3),
        merge=round(1 / ratio),
        image_size=r.read_int("vision.image_size", "image_size"),
        projector_dim=r.read_int("vision.projector_dim", "vision_output_dim",
                                 "projector_output_dim"),
    )


def vision_tower(config: dict[str, Any], kind: str) -> Fields:
    """``{"vision": VisionTower}`` from the top-level ``vision_config`` of a Qwen2.5-VL or
    Llama 4 config; nothing for a text-only config."""
    family = VISION_FAMILIES.get(kind)
    raw = config.get("vision_config")
    if family is None or raw is None:
        return {}
    if not isinstance(raw, dict):
        raise InvalidInput("vision_config", "must be a JSON object", "the vision encoder's config")
    reader = ConfigReader(raw, "vision_config.")
    tower = _llama4_tower(reader) if family == "llama4" else _qwen_tower(reader)
    reader.build(lambda: validate_vision(tower))
    return {"vision": tower}
