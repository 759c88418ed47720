"""The linear layers of a transformer layer: their shapes, and the weights quantizers touch."""

from __future__ import annotations

from service.core.model.architecture import Architecture
from service.core.model.params import dense_mlp_params, parameter_breakdown

# Hugging Face model types whose attention projects q, k and v with one fused linear
# (modeling_phi3 qkv_proj, modeling_gpt2 c_attn, modeling_gpt_neox/falcon query_key_value),
# and whose gated MLP has one fused gate_up_proj (modeling_phi3).
FUSED_QKV = ("phi3", "gpt2", "gpt_neox", "falcon")
FUSED_GATE_UP = ("phi3",)


def attention_linear_shapes(arch: Architecture) -> list[tuple[int, int]]:
    """(in, out) of each attention projection module in one layer (a fused q|k|v is one)."""
    h = arch.hidden
    if arch.mla is not None:
        m, n = arch.mla, arch.heads
        qk = m.qk_nope_head_dim + m.qk_rope_head_dim
        q = [(h, m.q_lora_rank), (m.q_lora_rank, n * qk)] if m.q_lora_rank else [(h, n * qk)]
        kv = [(h, m.kv_lora_rank + m.qk_rope_head_dim),
              (m.kv_lora_rank, n * (m.qk_nope_head_dim + m.v_head_dim))]
        return [*q, *kv, (n * m.v_head_dim, h)]
    if arch.family in FUSED_QKV:
        return [(h, arch.q_width + 2 * arch.kv_width), (arch.q_width, h)]
    return [(h, arch.q_width), (h, arch.kv_width), (h, arch.kv_width), (arch.q_width, h)]


def mlp_linear_shapes(arch: Architecture, ffn: int) -> list[tuple[int, int]]:
    """(in, out) of each MLP projection module: gate, up, down (gated; a fused gate_up is one)
    or up, down (plain)."""
    h = arch.hidden
    if arch.mlp == "gated":
        if arch.family in FUSED_GATE_UP:
            return [(h, 2 * ffn), (ffn, h)]
        return [(h, ffn), (h, ffn), (ffn, h)]
    return [(h, ffn), (ffn, h)]


def quantizable_linear_params(arch: Architecture) -> int:
    """Parameters inside the layers' linear weights: what NF4/GPTQ/AWQ quantize.

    Embeddings, lm_head and norms stay in 16-bit (bitsandbytes and AutoGPTQ defaults).
    """
    b = parameter_breakdown(arch)
    # Norm scales and biases are a rounding error next to the matrices; exclude the norms only.
    return b.attention + b.mlp - _bias_params(arch)


def _bias_params(arch: Architecture) -> int:
    biases = 0
    if arch.attn_bias:
        biases += arch.q_width + 2 * arch.kv_width
    if arch.attn_out_bias:
        biases += arch.hidden
    biases *= arch.layers
    if arch.mlp_bias:
        with_bias = dense_mlp_params(arch, arch.ffn)
        without = dense_mlp_params(arch.with_changes(mlp_bias=False), arch.ffn)
        biases += arch.dense_layers * (with_bias - without)
    return biases
