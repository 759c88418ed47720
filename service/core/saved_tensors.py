"""The tensors one transformer layer keeps for backward, item by item, per token.

Each ``Saved`` item is one tensor autograd keeps alive between forward and backward, sized in
bytes per token of the micro-batch. Two implementation profiles:

- ``hf``: Hugging Face ``transformers`` modules computing in 16-bit (what DeepSpeed, FSDP mixed
  precision and accelerate run): RMSNorm upcasts to fp32 and keeps the fp32 input, eager
  attention keeps an fp32 softmax, SDPA keeps q, k, v, its output and an fp32 log-sum-exp.
  Checked against ``bench/measure`` (saved-tensor hooks on real models).
- ``megatron``: Megatron-LM / Transformer Engine fused kernels. For a GPT with a 4h MLP and
  dropout it is exactly Korthikanti et al. 2022 (arXiv 2205.05198), eq. 2: 34h + 5as per token.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from service.core.architecture import Architecture


@dataclass(frozen=True, slots=True)
class Saved:
    name: str
    bytes_per_token: float
    tp_split: bool  # split by tensor parallelism (always split when sequence parallel)
    core: bool = False  # core-attention tensors that selective recompute drops


@dataclass(frozen=True, slots=True)
class LayerSetup:
    """What changes the saved tensors of a layer besides the architecture."""

    seq_len: int
    elem_bytes: int  # 2 for 16-bit compute, 4 for fp32
    flash: bool  # fused attention (FlashAttention / SDPA): no s x s matrices
    profile: str  # "hf" or "megatron"
    linear_input_bytes: int = 0  # fp8 recipes save linear inputs in fp8 (1 B); 0: elem_bytes

    @property
    def lin(self) -> int:
        """Bytes of one saved linear-layer input element (Transformer Engine fp8: 1)."""
        return self.linear_input_bytes or self.elem_bytes


def norm_saved(arch: Architecture, width: int, e: int, profile: str, name: str) -> list[Saved]:
    """One norm's saved tensors.

    hf RMSNorm (``LlamaRMSNorm``): fp32 input 4w, rsqrt 4, normalized 16-bit e*w.
    hf Gemma RMSNorm: computes all in fp32: fp32 input 4w, rsqrt 4, fp32 normalized 4w.
    LayerNorm (``native_layer_norm``) and fused TE norms: input e*w plus fp32 mean/rstd.
    """
    if profile == "hf" and arch.norm == "rmsnorm":
        out = 4 if arch.norms_per_layer == 4 else e  # Gemma's norm keeps an fp32 product
        return [Saved(f"{name} fp32 input", 4 * width, False),
                Saved(f"{name} normalized", out * width + 4, False)]
    stats = 8 if arch.norm == "layernorm" else 4
    return [Saved(f"{name} input", e * width + stats, False)]


def attention_saved(arch: Architecture, s: LayerSetup) -> list[Saved]:
    e = s.elem_bytes
    q, kv = arch.q_width, arch.kv_width
    items = norm_saved(arch, arch.hidden, e, s.profile, "attn norm")
    items.append(Saved("qkv input", s.lin * arch.hidden, False))
    if arch.mla is not None:
        items += _mla_saved(arch, s)
    else:
        items.append(Saved("q, k, v", e * (q + 2 * kv), True))
        if arch.qk_norm:
            items.append(Saved("q/k norm fp32 + normalized", (4 + e) * (q + kv), True))
        if arch.positions == "rotary" and s.profile == "hf":
            # apply_rotary_pos_emb: q*cos keeps q, rotate_half(q)*sin keeps rotate_half(q)
            items.append(Saved("rotary q, k and rotate_half", 2 * e * (q + kv), True))
        items += _core_saved(arch, s, q, kv, q)
    out_width = q if arch.mla is None else arch.heads * arch.mla.v_head_dim
    items.append(Saved("out-proj input", s.lin * out_width, True))
    if arch.dropout > 0:
        items.append(Saved("residual dropout mask", arch.hidden, False))
    return items


def _core_saved(arch: Architecture, s: LayerSetup, q: int, kv: int, out: int) -> list[Saved]:
    """Core attention: softmax(QK^T)V.

    Fused (flash/SDPA): q, k, v are already counted; keeps fp32 LSE 4a and (HF, whose
    out-proj reads a transposed copy) the output e*out; in Megatron the output is the
    out-proj input, counted once.
    Eager (HF ``eager_attention_forward``): the s x s matrices per head: fp32 softmax 4as,
    its 16-bit copy 2as, and with dropout a 1-byte mask plus the dropped copy; GQA's
    ``repeat_kv`` copies K and V to full width.
    """
    e, a, seq = s.elem_bytes, arch.heads, s.seq_len
    items: list[Saved] = []
    if s.flash:
        items.append(Saved("softmax LSE fp32", 4 * a, True))
        if s.profile == "hf":
            items.append(Saved("attention output", e * out, True))
        return items
    if s.profile == "hf" and kv < q:
        items.append(Saved("repeat_kv K, V copies", 2 * e * q, True))
    softmax_bytes = (4 + e) if s.profile == "hf" else e
    items.append(Saved("attention probs (s x s per head)", softmax_bytes * a * seq, True, True))
    if arch.dropout > 0:
        items.append(Saved("attention dropout mask + output", (1 + e) * a * seq, True, True))
    return items


def _mla_saved(arch: Architecture, s: LayerSetup) -> list[Saved]:
    """DeepSeek MLA: the low-rank latents, their norms, the up-projected heads, the core."""
    assert arch.mla is not None
    m, e, a = arch.mla, s.elem_bytes, arch.heads
    qk = m.qk_nope_head_dim + m.qk_rope_head_dim
    items = [
        Saved("kv latent + norm", e * (m.kv_lora_rank + m.qk_rope_head_dim)
              + (4 + e) * m.kv_lora_rank, False),
        Saved("q, k, v heads", e * a * (2 * qk + m.v_head_dim), True),
    ]
    if m.q_lora_rank:
        items.append(Saved("q latent + norm", (4 + 2 * e) * m.q_lora_rank, False))
    return items + _core_saved(arch, s, a * qk, a * qk, a * m.v_head_dim)


def mlp_saved(arch: Architecture, ffn: int, s: LayerSetup) -> list[Saved]:
    """Gated MLP: gate, up, act(gate) and the product act*up that feeds the down projection
    (4e*f); plain: up and act(up) (2e*f). HF ``LlamaMLP`` keeps exactly these; Megatron's
    fused fc1 keeps its 2f-wide output, the SwiGLU its output, and fc2 reads that output.
    The fc2 input is a linear input: fp8 under Transformer Engine fp8.
    """
    e = s.elem_bytes
    if arch.mlp == "gated":
        return [Saved("mlp gate, up, act", 3 * e * ffn, True),
                Saved("mlp down-proj input", s.lin * ffn, True)]
    return [Saved("mlp up", e * ffn, True), Saved("mlp down-proj input", s.lin * ffn, True)]


def ffn_saved(arch: Architecture, s: LayerSetup, moe_layer: bool) -> list[Saved]:
    e = s.elem_bytes
    items = norm_saved(arch, arch.hidden, e, s.profile, "mlp norm")
    items.append(Saved("mlp input", s.lin * arch.hidden, False))
    if arch.norms_per_layer == 4:  # Gemma: post-attention and post-MLP norms
        items += norm_saved(arch, arch.hidden, e, s.profile, "post norm")
        items += norm_saved(arch, arch.hidden, e, s.profile, "post-mlp norm")
    if moe_layer and arch.moe is not None:
        moe, k = arch.moe, arch.moe.experts_per_token
        items.append(Saved("router fp32 probs", 4 * moe.experts + e * moe.experts, False))
        items.append(Saved("routed token copies in/out", k * 2 * e * arch.hidden, True))
        items += [Saved(f"expert {x.name}", k * x.bytes_per_token, True)
                  for x in mlp_saved(arch, moe.expert_ffn, s)]
        if moe.shared_experts:
            shared = moe.shared_experts * (moe.shared_expert_ffn or moe.expert_ffn)
            items += [Saved(f"shared {x.name}", x.bytes_per_token, True)
                      for x in mlp_saved(arch, shared, s)]
    else:
        items += mlp_saved(arch, arch.ffn, s)
    if arch.dropout > 0:
        items.append(Saved("mlp dropout mask", arch.hidden, False))
    return items


@lru_cache(maxsize=1024)
def layer_saved(arch: Architecture, s: LayerSetup, moe_layer: bool) -> tuple[Saved, ...]:
    """Everything one layer keeps for backward (no recompute), bytes per token."""
    return tuple(attention_saved(arch, s) + ffn_saved(arch, s, moe_layer))
