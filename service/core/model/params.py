"""Exact parameter counts, per module, from an Architecture.

Each function counts the weights a Hugging Face ``transformers`` module of that kind holds
(``modeling_llama.py``, ``modeling_gpt2.py``, ``modeling_deepseek_v3.py``, ...): weight
matrices, biases and norm scales. Rotary tables are buffers, not parameters.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from service.core.errors import InvalidInput
from service.core.model.architecture import MLA, Architecture, MoE


@dataclass(frozen=True, slots=True)
class ParamBreakdown:
    embedding: int  # token (+ learned position) embeddings
    attention: int  # all layers
    mlp: int  # all layers, dense and MoE (all experts)
    norms: int  # all layers plus the final norm
    lm_head: int  # 0 when tied to the embedding

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
    return count


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
    return ParamBreakdown(
        embedding=embedding_params(arch),
        attention=arch.layers * attention_params(arch),
        mlp=mlp,
        norms=norms,
        lm_head=0 if arch.tied_embeddings else arch.vocab * arch.hidden,
    )


def parameter_count(arch: Architecture) -> int:
    """Exact number of trainable parameters of the model."""
    return parameter_breakdown(arch).total


def active_parameter_count(arch: Architecture) -> int:
    """Parameters one token passes through: for MoE only top-k routed experts count.

    The router and shared experts are always active (Mixtral 8x7B: 12.9B of 46.7B).
    """
    total = parameter_count(arch)
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
