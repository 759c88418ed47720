"""The linear layers of a transformer layer: their shapes, and the weights quantizers touch."""

from __future__ import annotations

from service.core.model.architecture import Architecture, LinearAttention

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
    q_out = 2 * arch.q_width if arch.attn_output_gate else arch.q_width  # query | gate
    return [(h, q_out), (h, arch.kv_width), (h, arch.kv_width), (arch.q_width, h)]


def linear_attention_shapes(arch: Architecture, block: LinearAttention) -> list[tuple[int, int]]:
    """Gated DeltaNet's linears: in_proj_qkvz, in_proj_ba, out_proj (``Qwen3NextGatedDeltaNet``)."""
    h, k, v = arch.hidden, block.key_width, block.value_width
    return [(h, 2 * k + 2 * v), (h, 2 * block.value_heads), (v, h)]


def mlp_linear_shapes(arch: Architecture, ffn: int) -> list[tuple[int, int]]:
    """(in, out) of each MLP projection module: gate, up, down (gated; a fused gate_up is one)
    or up, down (plain)."""
    h = arch.hidden
    if arch.mlp == "gated":
        if arch.family in FUSED_GATE_UP:
            return [(h, 2 * ffn), (ffn, h)]
        return [(h, ffn), (h, ffn), (ffn, h)]
    return [(h, ffn), (ffn, h)]


def _weights(shapes: list[tuple[int, int]]) -> int:
    return sum(i * o for i, o in shapes)


def expert_weight_params(arch: Architecture) -> int:
    """Weight matrices of all routed experts (no biases): what MXFP4 checkpoints store in 4 bits
    (gpt-oss ``quantization_config``: everything but attention, router, embeddings and head)."""
    if arch.moe is None:
        return 0
    moe = arch.moe
    return arch.moe_layers * moe.experts * _weights(mlp_linear_shapes(arch, moe.expert_ffn))


def quantizable_linear_params(arch: Architecture) -> int:
    """Weight matrices of the layers' linears: what NF4/GPTQ/AWQ/int8/fp8 quantize.

    Attention (or linear-attention) projections, dense MLPs, routed and shared experts.
    Embeddings, LM head, norms, biases, MoE routers (kept 16-bit by AutoAWQ/GPTQ and in the
    fp8 checkpoints of DeepSeek-V3 and Kimi K2) and a vision tower stay 16-bit.
    """
    mixers = arch.attention_layers * _weights(attention_linear_shapes(arch))
    if arch.linear_attention is not None:
        mixers += arch.linear_attention_layers * _weights(
            linear_attention_shapes(arch, arch.linear_attention))
    mlps = arch.dense_layers * _weights(mlp_linear_shapes(arch, arch.ffn))
    if arch.moe is not None:
        moe = arch.moe
        shared_ffn = moe.shared_expert_ffn or moe.expert_ffn
        shared = moe.shared_experts * _weights(mlp_linear_shapes(arch, shared_ffn))
        mlps += arch.moe_layers * shared + expert_weight_params(arch)
    return mixers + mlps
