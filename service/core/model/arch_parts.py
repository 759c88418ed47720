"""The optional blocks of an Architecture: MoE layers, latent attention, linear-attention layers
and a vision tower, each with its validation.

Every field has the name the block's ``transformers`` configuration gives it in our vocabulary;
``hf_families`` / ``hf_moe`` / ``hf_hybrid`` say which ``config.json`` key feeds which field.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from service.core.errors import InvalidInput

MAX_WIDTH = 1_000_000  # hidden, ffn and head sizes
MAX_EXPERTS = 100_000

VisionKind = Literal["qwen2_5_vl", "llama4"]
VISION_KINDS: tuple[VisionKind, ...] = ("qwen2_5_vl", "llama4")


def check_int(name: str, value: object, low: int, high: int) -> None:
    """InvalidInput naming ``name`` unless ``value`` is a whole number in low..high."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(name, f"must be a whole number, got {value!r}", f"an integer {low}..{high:,}")
    if not low <= value <= high:
        raise InvalidInput(name, f"{value:,} is out of range", f"an integer {low}..{high:,}")


@dataclass(frozen=True, slots=True)
class MoE:
    """Mixture-of-experts feed-forward layers (Mixtral, Qwen-MoE, DeepSeek, Llama 4, gpt-oss)."""

    experts: int
    experts_per_token: int
    expert_ffn: int
    shared_experts: int = 0
    shared_expert_ffn: int = 0  # per shared expert; 0 means expert_ffn
    dense_layers: int = 0  # leading layers that keep a dense MLP (DeepSeek first_k_dense_replace)
    layer_step: int = 1  # every n-th layer after the dense ones is MoE (Qwen2-MoE decoder_sparse_step)
    router_bias: bool = False  # per-expert router bias (DeepSeek e_score_correction_bias, gpt-oss)
    shared_expert_gate: bool = False  # Qwen2-MoE's sigmoid gate on the shared expert
    # The routed experts are stored as fused 3-D nn.Parameters (one gate_up and one down tensor
    # for all experts: transformers 5's *Experts modules, hf_moe.py), not one nn.Linear per
    # expert: module-level tools (peft target_modules) do not see them (memory/lora.py).
    fused_experts: bool = False


@dataclass(frozen=True, slots=True)
class MLA:
    """DeepSeek multi-head latent attention (DeepSeek-V2/V3, Kimi K2)."""

    kv_lora_rank: int
    qk_nope_head_dim: int
    qk_rope_head_dim: int
    v_head_dim: int
    q_lora_rank: int = 0  # 0: queries projected directly from the hidden state


@dataclass(frozen=True, slots=True)
class LinearAttention:
    """Hybrid models whose token mixer is a linear-attention block on most layers: Qwen3-Next's
    Gated DeltaNet (transformers ``modeling_qwen3_next.Qwen3NextGatedDeltaNet``).

    Layer i keeps softmax attention when (i + 1) is a multiple of ``full_attention_interval``
    (``Qwen3NextConfig.layer_types``); the others carry a fixed-size recurrent state and a
    short-convolution state per sequence instead of a KV cache.
    """

    full_attention_interval: int  # 4 in Qwen3-Next: 12 attention layers of 48
    key_heads: int  # linear_num_key_heads
    value_heads: int  # linear_num_value_heads
    key_head_dim: int  # linear_key_head_dim
    value_head_dim: int  # linear_value_head_dim
    conv_kernel: int = 4  # linear_conv_kernel_dim

    @property
    def key_width(self) -> int:
        return self.key_heads * self.key_head_dim

    @property
    def value_width(self) -> int:
        return self.value_heads * self.value_head_dim

    @property
    def conv_width(self) -> int:
        """Channels of the causal depthwise convolution over q, k and v (``conv_dim``)."""
        return 2 * self.key_width + self.value_width


@dataclass(frozen=True, slots=True)
class VisionTower:
    """A vision encoder and the projector feeding its output to the language model.

    ``kind`` selects the modeling file whose modules are counted (``vision.py``):
    ``qwen2_5_vl`` (``modeling_qwen2_5_vl``: Conv3d patch embedding over ``temporal_patch``
    frames, RMSNorm blocks with SwiGLU MLPs, a 2x2 patch-merger MLP) or ``llama4``
    (``modeling_llama4``: linear patch embedding, learned positions for one ``image_size`` tile,
    LayerNorm blocks with GELU MLPs, pixel-shuffle adapter MLP, linear projector).

    An image becomes (H/14) x (W/14) / 4 language-model tokens in Qwen2.5-VL (one per 28 x 28
    pixels after resizing to multiples of 28) and 144 per 336-px tile in Llama 4
    (``vision.image_tokens``). Only the tower's weights are modelled, not images' activations.
    """

    kind: VisionKind
    layers: int
    hidden: int
    ffn: int
    heads: int
    patch_size: int = 14
    channels: int = 3
    temporal_patch: int = 1  # Qwen2.5-VL temporal_patch_size 2
    merge: int = 2  # patches merged per side into one LM token (spatial_merge_size, 1/pixel_shuffle)
    image_size: int = 0  # Llama 4: side of one tile in pixels (its position table); 0: none
    projector_dim: int = 0  # Llama 4: vision_output_dim, the adapter's and projector's width


def validate_moe(moe: MoE, layers: int) -> None:
    check_int("arch.moe.experts", moe.experts, 1, MAX_EXPERTS)
    check_int("arch.moe.experts_per_token", moe.experts_per_token, 1, moe.experts)
    check_int("arch.moe.expert_ffn", moe.expert_ffn, 1, MAX_WIDTH)
    check_int("arch.moe.shared_experts", moe.shared_experts, 0, 1_000)
    check_int("arch.moe.shared_expert_ffn", moe.shared_expert_ffn, 0, MAX_WIDTH)
    check_int("arch.moe.dense_layers", moe.dense_layers, 0, layers - 1)
    check_int("arch.moe.layer_step", moe.layer_step, 1, layers)


def validate_mla(mla: MLA) -> None:
    for name in ("kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"):
        check_int(f"arch.mla.{name}", getattr(mla, name), 1, MAX_WIDTH)
    check_int("arch.mla.q_lora_rank", mla.q_lora_rank, 0, MAX_WIDTH)


def validate_linear_attention(block: LinearAttention, layers: int) -> None:
    check_int("arch.linear_attention.full_attention_interval", block.full_attention_interval, 2,
              max(2, layers))
    for name in ("key_heads", "value_heads", "key_head_dim", "value_head_dim"):
        check_int(f"arch.linear_attention.{name}", getattr(block, name), 1, MAX_WIDTH)
    check_int("arch.linear_attention.conv_kernel", block.conv_kernel, 1, 64)
    if block.value_heads % block.key_heads:
        raise InvalidInput("arch.linear_attention.value_heads",
                           f"{block.value_heads} value heads are not a multiple of "
                           f"{block.key_heads} key heads", "a multiple of key_heads")


def validate_vision(tower: VisionTower) -> None:
    if tower.kind not in VISION_KINDS:
        raise InvalidInput("arch.vision.kind", f"unknown vision tower {tower.kind!r}",
                           ", ".join(VISION_KINDS))
    check_int("arch.vision.layers", tower.layers, 1, 1_000)
    for name in ("hidden", "ffn", "heads", "patch_size"):
        check_int(f"arch.vision.{name}", getattr(tower, name), 1, MAX_WIDTH)
    check_int("arch.vision.channels", tower.channels, 1, 16)
    check_int("arch.vision.temporal_patch", tower.temporal_patch, 1, 16)
    check_int("arch.vision.merge", tower.merge, 1, 16)
    check_int("arch.vision.image_size", tower.image_size, 0, 100_000)
    check_int("arch.vision.projector_dim", tower.projector_dim, 0, MAX_WIDTH)
    if tower.kind == "llama4" and (tower.image_size < tower.patch_size or not tower.projector_dim):
        raise InvalidInput("arch.vision", "a Llama 4 vision tower needs image_size and projector_dim",
                           "image_size >= patch_size and projector_dim >= 1")
