"""Exact parameter counts, per module, from an Architecture.

Each function counts the weights a Hugging Face ``transformers`` module of that kind holds
(``modeling_llama.py``, ``modeling_gpt2.py``, ``modeling_deepseek_v3.py``, ...): weight
matrices, biases and norm scales. Rotary tables are buffers, not parameters.

Multi-token-prediction modules (DeepSeek-V3, GLM-4.5, Qwen3-Next) are not part of
``parameter_count``: the published totals leave them out and serving engines load them only
for MTP speculative decoding; ``mtp_params`` counts them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from service.core.errors import InvalidInput
from service.core.model.architecture import MLA, Architecture, LinearAttention, MoE
from service.core.model.vision import vision_params


@dataclass(frozen=True, slots=True)
class ParamBreakdown:
    # Token (+ learned position) embeddings, and a vision tower: both feed the first layer, so
    # the first pipeline stage holds them.
    embedding: int
    attention: int  # all layers' token mixers: attention, or linear attention in hybrids
    mlp: int  # all layers, dense and MoE (all experts)
    norms: int  # all layers plus the final norm
    lm_head: int  # 0 when tied to the embedding
    vision: int = 0  # the vision tower and its projector (already inside ``embedding``)

    @property
    def total(self) -> int:
        return self.embedding + self.attention + self.mlp + self.norms + self.lm_head


def norm_params(arch: Architecture, width: int) -> int:
    """A LayerNorm holds scale and bias (2w), an RMSNorm only a scale (w)."""
    if arch.norm == "layernorm" and arch.norm_bias:
        return 2 * width
    return width


def attention_params(arch: Architecture) -> int:
    """One layer's attention: Q, K, V and output projections, with biases if any.

    GQA/MQA: K and V have kv_heads x head_dim columns (Ainslie et al. 2023).
    MLA: see ``mla_attention_params``.
    """
    if arch.mla is not None:
        return mla_attention_params(arch, arch.mla)
    h, q, kv = arch.hidden, arch.q_width, arch.kv_width
    count = h * (q + 2 * kv) + q * h
    if arch.attn_bias:
        count += q + 2 * kv
    if arch.attn_out_bias:
        count += h
    if arch.qk_norm:
        count += q + kv if arch.qk_norm_full else 2 * arch.head_dim_resolved
    return count + attention_extras(arch)


def attention_extras(arch: Architecture) -> int:
    """gpt-oss attention sinks: one learned logit per head (``GptOssAttention.sinks``).
    Qwen3-Next gated attention: q_proj is twice as wide, the second half a sigmoid gate on the
    attention output (``Qwen3NextAttention``: heads * head_dim * 2 outputs)."""
    count = arch.heads if arch.attn_sinks else 0
    if arch.attn_output_gate:
        count += arch.hidden * arch.q_width + (arch.q_width if arch.attn_bias else 0)
    return count


def linear_attention_params(arch: Architecture, block: LinearAttention) -> int:
    """One Gated DeltaNet layer (transformers ``Qwen3NextGatedDeltaNet``).

    in_proj_qkvz h x (2 key_width + 2 value_width), in_proj_ba h x 2 value_heads, a depthwise
    conv1d over q|k|v (conv_width x kernel, no bias), dt_bias and A_log (value_heads each), the
    gated RMSNorm (value_head_dim), out_proj value_width x h; no biases.
    """
    h, k, v = arch.hidden, block.key_width, block.value_width
    projections = h * (2 * k + 2 * v) + h * 2 * block.value_heads + v * h
    return projections + block.conv_width * block.conv_kernel + 2 * block.value_heads \
        + block.value_head_dim


def token_mixer_params(arch: Architecture) -> int:
    """All layers' attention; hybrids: attention layers plus linear-attention layers."""
    full = arch.attention_layers * attention_params(arch)
    if arch.linear_attention is None:
        return full
    return full + arch.linear_attention_layers * linear_attention_params(arch, arch.linear_attention)


def mla_attention_params(arch: Architecture, mla: MLA) -> int:
    """DeepSeek-V2/V3 multi-head latent attention (DeepSeek-V2 paper, section 2.1).

    q: h*q_lora + q_lora (norm) + q_lora*heads*(nope+rope), or h*heads*(nope+rope) without q_lora;
    kv: h*(kv_lora+rope) + kv_lora (norm) + kv_lora*heads*(nope+v); out: heads*v*h.
    """
    h, n = arch.hidden, arch.heads
    qk_head = mla.qk_nope_head_dim + mla.qk_rope_head_dim
    if mla.q_lora_rank:
        q = h * mla.q_lora_rank + mla.q_lora_rank + mla.q_lora_rank * n * qk_head
    else:
        q = h * n * qk_head
    kv = h * (mla.kv_lora_rank + mla.qk_rope_head_dim) + mla.kv_lora_rank
    kv += mla.kv_lora_rank * n * (mla.qk_nope_head_dim + mla.v_head_dim)
    out = n * mla.v_head_dim * h
    return q + kv + out


def dense_mlp_params(arch: Architecture, ffn: int) -> int:
    """Gated MLP (SwiGLU/GeGLU, Shazeer 2020): 3*h*ffn; plain MLP: 2*h*ffn; plus biases."""
    h = arch.hidden
    if arch.mlp == "gated":
        count = 3 * h * ffn
        bias = 2 * ffn + h
    else:
        count = 2 * h * ffn
        bias = ffn + h
    return count + (bias if arch.mlp_bias else 0)


def moe_mlp_params(arch: Architecture, moe: MoE) -> int:
    """One MoE layer: router h*E (+E bias), E routed experts, shared experts (+ their gate)."""
    router = arch.hidden * moe.experts + (moe.experts if moe.router_bias else 0)
    routed = moe.experts * dense_mlp_params(arch, moe.expert_ffn)
    shared_ffn = moe.shared_expert_ffn or moe.expert_ffn
    shared = moe.shared_experts * dense_mlp_params(arch, shared_ffn)
    gate = arch.hidden if moe.shared_expert_gate else 0
    return router + routed + shared + gate


def embedding_params(arch: Architecture) -> int:
    """Token table vocab*h, plus a learned position table max_positions*h (GPT-2)."""
    positions = arch.max_positions * arch.hidden if arch.positions == "learned" else 0
    return arch.vocab * arch.hidden + positions


@lru_cache(maxsize=1024)
def parameter_breakdown(arch: Architecture) -> ParamBreakdown:
    """Parameters by module kind (cached: the planner asks for the same shape many times)."""
    mlp = arch.dense_layers * dense_mlp_params(arch, arch.ffn)
    if arch.moe is not None:
        mlp += arch.moe_layers * moe_mlp_params(arch, arch.moe)
    norms = arch.layers * arch.norms_per_layer * norm_params(arch, arch.hidden)
    norms += norm_params(arch, arch.hidden)  # final norm
    vision = 0 if arch.vision is None else vision_params(arch.vision, arch.hidden)
    return ParamBreakdown(
        embedding=embedding_params(arch) + vision,
        attention=token_mixer_params(arch),
        mlp=mlp,
        norms=norms,
        lm_head=0 if arch.tied_embeddings else arch.vocab * arch.hidden,
        vision=vision,
    )


def mtp_params(arch: Architecture) -> int:
    """Multi-token-prediction modules, each (DeepSeek-V3 report sec. 2.2; vLLM
    ``deepseek_mtp.py``, ``glm4_moe_mtp.py``, ``qwen3_next_mtp.py``): two RMSNorms on its inputs
    (enorm, hnorm), a projection of [embedding; hidden] 2h x h, one decoder layer with full
    attention and the model's MoE (or dense) MLP, and a final norm. The embedding and the
    output head are shared with the main model (the checkpoints also store copies of them).
    """
    if not arch.mtp_layers:
        return 0
    mlp = dense_mlp_params(arch, arch.ffn) if arch.moe is None else moe_mlp_params(arch, arch.moe)
    h = arch.hidden
    layer = attention_params(arch) + mlp + arch.norms_per_layer * norm_params(arch, h)
    return arch.mtp_layers * (2 * h * h + 3 * norm_params(arch, h) + layer)


def parameter_count(arch: Architecture) -> int:
    """Exact number of trainable parameters of the model."""
    return parameter_breakdown(arch).total


def active_parameter_count(arch: Architecture) -> int:
    """Parameters one text token passes through: for MoE only top-k routed experts count.

    The router and shared experts are always active (Mixtral 8x7B: 12.9B of 46.7B). A vision
    tower is not: text tokens never pass through it (Llama 4's "17B active" leaves it out).
    """
    b = parameter_breakdown(arch)
    total = b.total - b.vision
    if arch.moe is None:
        return total
    moe = arch.moe
    idle = (moe.experts - moe.experts_per_token) * dense_mlp_params(arch, moe.expert_ffn)
    return total - arch.moe_layers * idle


def layer_params(arch: Architecture) -> int:
    """Parameters of the transformer layers alone (what tensor/pipeline parallelism splits)."""
    b = parameter_breakdown(arch)
    return b.attention + b.mlp + b.norms - norm_params(arch, arch.hidden)


MAX_TOTAL_PARAMS = 10**14  # 100 trillion: far past any model that exists


def check_total_size(arch: Architecture) -> None:
    """Reject a user-given shape whose weights alone would pass 100 trillion parameters."""
    total = parameter_count(arch)
    if total > MAX_TOTAL_PARAMS:
        raise InvalidInput("arch", f"this shape has {total:.3g} parameters",
                           "a model below 100 trillion parameters")
