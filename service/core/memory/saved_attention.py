"""The attention half of a layer: what its norm, projections and core keep for backward.

Per token, e = bytes of a 16-bit element, q = heads x head_dim, kv = kv_heads x head_dim,
a = heads, s = sequence length (keys per query). See ``saved_tensors.py`` for the profiles.
"""

from __future__ import annotations

from service.core.memory.saved_tensors import LayerSetup, Saved, dropout_mask, norm_saved
from service.core.model.architecture import Architecture
from service.core.model.linears import FUSED_QKV

# Model families whose rotary embedding ends in ``torch.cat`` (partial-rotary code path): their
# q/k come out in (b, a, s, d) layout, so the out-projection reads a transposed copy of the
# attention output (modeling_phi3.py, modeling_gpt_neox.py, modeling_phi.py).
ROPE_VIA_CAT = ("phi3", "phi", "gpt_neox")


def qkv_input_copies(arch: Architecture) -> int:
    """Linears reading the attention's input: q, k and v, or one fused q|k|v."""
    return 1 if arch.family in FUSED_QKV else 3


def sdpa_mask_needed(arch: Architecture, seq_len: int) -> bool:
    """transformers builds an explicit mask for SDPA when a sliding window is as short as the
    keys (``masking_utils._ignore_causal_mask_sdpa``); then ``use_gqa_in_sdpa`` is false and
    ``repeat_kv`` expands K and V to the query heads."""
    window = arch.sliding_window
    return window > 0 and arch.sliding_window_layers >= 1 and seq_len >= window


def attention_saved(arch: Architecture, s: LayerSetup) -> list[Saved]:
    items = norm_saved(arch, s, "attention norm")
    if not s.adapters:  # a frozen linear keeps no input
        copies = qkv_input_copies(arch) if s.autocast else 1
        items.append(Saved("qkv input", copies * s.lin * arch.hidden, False))
    if arch.mla is not None:
        items += _mla_saved(arch, s)
    elif s.hf:
        items += _hf_attention(arch, s)
    else:
        items += _megatron_attention(arch, s)
    if arch.dropout > 0:
        items.append(dropout_mask(s, "attention residual", arch.hidden, False))
    return items


def _hf_attention(arch: Architecture, s: LayerSetup) -> list[Saved]:
    """HF attention modules (``modeling_llama.py`` and kin), checked in bench/measure.

    RoPE keeps only the shared cos/sin tables (non-layer): q*cos keeps cos, not q.
    SDPA: q e*q, k and v e*kv (GQA is not expanded: ``enable_gqa``), fp32 LSE 4a, output e*q,
    which the out-projection reads as a view (a copy too for ``ROPE_VIA_CAT`` families).
    Eager: q, the ``repeat_kv`` copies of K and V (q wide; a stride-0 view for MQA), fp32
    softmax 4as and its 16-bit copy e*as, Gemma 2's soft-capping tanh e*as, dropout's mask
    and dropped copy, and the out-projection's transposed copy e*q.
    GPT-2 (fused c_attn, no rotary): q is a view of the fused q|k|v output, which stays alive
    (at micro-batch 1), k and v are copied; its eager softmax stays 16-bit.
    """
    e, a, seq = s.elem_bytes, arch.heads, s.seq_len
    q, kv = arch.q_width, arch.kv_width
    items: list[Saved] = []
    if arch.qk_norm:
        g = arch.kv_heads_resolved
        items.append(Saved("q/k norms fp32 + normalized", (4 + e) * (q + kv) + 4 * (a + g), True))
    gpt2 = arch.family == "gpt2"
    if s.flash and arch.dropout > 0 and s.cpu:
        # CPU SDPA has no fused dropout: the math path upcasts to fp32 and keeps everything.
        return [*items, Saved("q, k, v in fp32 (CPU math SDPA)", 4 * (q + 2 * kv), True),
                Saved("fp32 softmax, dropout noise, dropped probs", 12 * a * seq, True, True),
                Saved("out-proj input", s.lin * q, True)]
    fused_alive = gpt2 and (s.flash or s.micro_batch == 1)
    q_bytes = e * (q + 2 * kv) if fused_alive else e * q
    if s.flash:
        masked = not s.cpu and sdpa_mask_needed(arch, seq)
        kv_saved = q if masked else kv  # repeat_kv expands K and V when a mask is passed
        items += [Saved("q (SDPA input)", q_bytes, True),
                  Saved("k, v (SDPA inputs)", 2 * e * kv_saved, True),
                  Saved("softmax LSE fp32", 4 * a, True), Saved("attention output", e * q, True)]
        if masked:  # the memory-efficient kernel keeps the 16-bit additive mask (b, 1, s, s)
            items.append(Saved("SDPA additive mask of the sliding window", e * seq, False))
        if arch.family in ROPE_VIA_CAT and not s.adapters:
            items.append(Saved("out-proj input (transposed copy)", s.lin * q, True))
        return items
    kvx = kv if arch.kv_heads_resolved == 1 else max(q, kv)
    probs = e if gpt2 else 4 + e  # fp32 softmax output plus its 16-bit copy
    if arch.attn_softcap:
        probs += e  # tanh(scores / cap) keeps its output
    items += [Saved("q", q_bytes, True), Saved("K, V for the matmuls (repeat_kv)", 2 * e * kvx, True),
              Saved("attention probs (s x s per head)", probs * a * seq, True, True)]
    if arch.dropout > 0:
        items.append(Saved("attention dropout mask + dropped probs",
                           (s.mask_bytes + e) * a * seq, True, True))
    items.append(Saved("out-proj input", s.lin * q, True))
    return items


def _megatron_attention(arch: Architecture, s: LayerSetup) -> list[Saved]:
    """Megatron/TE: Q, K, V (Korthikanti's 4sbh + 2sbh for MHA), the core attention, and the
    out-projection input, which is the attention output. Eager core (no flash): the 16-bit
    softmax 2as, with dropout a 1-byte mask and the dropped copy: 5as (Korthikanti eq. 2).
    Flash: only the fp32 LSE."""
    e, a, seq = s.elem_bytes, arch.heads, s.seq_len
    q, kv = arch.q_width, arch.kv_width
    items = [Saved("q, k, v", e * (q + 2 * kv), True)]
    if arch.qk_norm:
        items.append(Saved("q/k norm inputs", e * (q + kv), True))
    if s.flash:
        items.append(Saved("softmax LSE fp32", 4 * a, True))
    else:
        items.append(Saved("attention probs (s x s per head)", e * a * seq, True, True))
        if arch.dropout > 0:
            items.append(Saved("attention dropout mask + output", (1 + e) * a * seq, True, True))
    items.append(Saved("out-proj input", s.lin * q, True))
    return items


def _mla_saved(arch: Architecture, s: LayerSetup) -> list[Saved]:
    """DeepSeek MLA: the low-rank latents and their norms, the up-projected heads, the core
    (q/k head width nope + rope, v head width v), and the out-projection input."""
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
    if s.flash:
        items.append(Saved("softmax LSE fp32", 4 * a, True))
    else:
        items.append(Saved("attention probs (s x s per head)", (4 + e) * a * s.seq_len, True, True))
    items.append(Saved("out-proj input", s.lin * a * m.v_head_dim, True))
    return items
