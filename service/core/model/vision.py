"""Vision towers of vision-language models: their exact weights, and how many tokens an image
becomes.

Only the weights are modelled: the tower's own activations when it encodes an image, and the
image tokens' activations and KV cache in the language model, are not (``caveats.py`` says so
in every answer); an image's tokens can be added to ``seq_len`` by hand with
``image_tokens``.
"""

from __future__ import annotations

import math

from service.core.model.arch_parts import VisionTower

# The pixel bounds of Qwen2.5-VL's released preprocessor_config.json (min_pixels 3136,
# max_pixels 12845056 = 28 * 28 * 16384): an image becomes 4 to 16,384 tokens.
QWEN_VL_MIN_PIXELS = 3_136
QWEN_VL_MAX_PIXELS = 12_845_056
# Llama 4's processor tiles an image into at most 16 tiles of 336 px plus one global tile
# (``Llama4ImageProcessorFast`` max_patches 16, ``resize_to_max_canvas`` false).
LLAMA4_MAX_TILES = 16


def _layer_norm(width: int) -> int:
    return 2 * width  # scale and bias


def qwen2_5_vl_params(tower: VisionTower, text_hidden: int) -> int:
    """``Qwen2_5_VisionTransformerPretrainedModel`` (transformers ``modeling_qwen2_5_vl``).

    patch_embed: Conv3d(channels, hidden, (temporal_patch, patch, patch), bias=False);
    each block: two RMSNorms, qkv Linear(h, 3h) and proj Linear(h, h) with biases, a SwiGLU MLP
    (gate, up, down, with biases); merger: RMSNorm(h), Linear(h m^2, h m^2) and
    Linear(h m^2, text hidden), with biases. Rotary tables are buffers.
    """
    h, f, m2 = tower.hidden, tower.ffn, tower.merge**2
    patch = tower.channels * tower.temporal_patch * tower.patch_size**2 * h
    attention = h * 3 * h + 3 * h + h * h + h
    mlp = 3 * h * f + 2 * f + h
    block = 2 * h + attention + mlp
    merged = h * m2
    merger = h + merged * merged + merged + merged * text_hidden + text_hidden
    return patch + tower.layers * block + merger


def llama4_params(tower: VisionTower, text_hidden: int) -> int:
    """``Llama4VisionModel`` + ``Llama4MultiModalProjector`` (transformers ``modeling_llama4``).

    Patch embedding: an unfolded Linear(channels * patch^2, h, bias=False); a class token (h);
    learned positions for one tile ((image/patch)^2 + 1) x h; LayerNorms (with bias) before and
    after the blocks; each block: q, k, v, o Linear(h, h) with biases, fc1/fc2 GELU MLP with
    biases, two LayerNorms; the pixel-shuffle adapter ``Llama4VisionMLP2``: fc1
    Linear(intermediate_size, p) and fc2 Linear(p, p) without biases (its input, h / ratio^2
    after the pixel shuffle, is intermediate_size wide); the projector Linear(p, text hidden)
    without bias.
    Checked: 871,932,416 for Llama 4 Scout (safetensors total 108,641,793,536 = 107,769,861,120
    language model + this tower).
    """
    h, f, p = tower.hidden, tower.ffn, tower.projector_dim
    patch = tower.channels * tower.patch_size**2 * h
    positions = ((tower.image_size // tower.patch_size) ** 2 + 1) * h
    block = 4 * (h * h + h) + (h * f + f) + (f * h + h) + 2 * _layer_norm(h)
    adapter = f * p + p * p
    return patch + h + positions + 2 * _layer_norm(h) + tower.layers * block + adapter \
        + p * text_hidden


def vision_params(tower: VisionTower, text_hidden: int) -> int:
    """Parameters of the vision tower and its projector into the language model."""
    if tower.kind == "llama4":
        return llama4_params(tower, text_hidden)
    return qwen2_5_vl_params(tower, text_hidden)


def image_tokens(tower: VisionTower, height: int, width: int) -> int:
    """Language-model tokens one image becomes (without the start/end marker tokens).

    Qwen2.5-VL: the image is resized to multiples of patch x merge (28 px) within the
    processor's pixel bounds (``smart_resize``), then one token per 28 x 28 pixels:
    (H/14) x (W/14) / 4. Llama 4: 144 tokens per 336-px tile ((336/14)^2 / 4), the image cut
    into up to 16 tiles plus a global tile when it is larger than one tile.
    """
    side = tower.patch_size * tower.merge
    if tower.kind == "llama4":
        per_tile = (tower.image_size // tower.patch_size) ** 2 // tower.merge**2
        tiles = math.ceil(height / tower.image_size) * math.ceil(width / tower.image_size)
        tiles = min(tiles, LLAMA4_MAX_TILES)
        return per_tile * (tiles + 1 if tiles > 1 else 1)
    h_bar = max(side, round(height / side) * side)
    w_bar = max(side, round(width / side) * side)
    if h_bar * w_bar > QWEN_VL_MAX_PIXELS:
        beta = math.sqrt(height * width / QWEN_VL_MAX_PIXELS)
        h_bar = math.floor(height / beta / side) * side
        w_bar = math.floor(width / beta / side) * side
    elif h_bar * w_bar < QWEN_VL_MIN_PIXELS:
        beta = math.sqrt(QWEN_VL_MIN_PIXELS / (height * width))
        h_bar = math.ceil(height * beta / side) * side
        w_bar = math.ceil(width * beta / side) * side
    return (h_bar // tower.patch_size) * (w_bar // tower.patch_size) // tower.merge**2
