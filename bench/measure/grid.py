"""The measurement grid: architectures built from transformers config objects, and the shape
points varied one factor at a time so each dependence (seq, batch, hidden, heads, KV heads, FFN,
vocab, experts) can be separated. Used by ``saved_activations.py``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import transformers


@dataclass(frozen=True)
class Shape:
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    ffn: int
    vocab: int
    experts: int = 0
    top_k: int = 0


@dataclass(frozen=True)
class Point:
    name: str
    shape: Shape
    seq: int
    batch: int


@dataclass(frozen=True)
class Arch:
    name: str
    model_type: str
    base: Shape
    free_head_dim: bool  # head_dim is a config field, not hidden // heads
    supports_gqa: bool
    build: Callable[[Shape, int], Any]
    extra: dict[str, Any]


def _llama_like(cls_name: str, **extra: Any) -> Callable[[Shape, int], Any]:
    def build(s: Shape, layers: int) -> Any:
        cls = getattr(transformers, cls_name)
        return cls(
            hidden_size=s.hidden,
            intermediate_size=s.ffn,
            num_hidden_layers=layers,
            num_attention_heads=s.heads,
            num_key_value_heads=s.kv_heads,
            head_dim=s.head_dim,
            vocab_size=s.vocab,
            max_position_embeddings=4096,
            pad_token_id=0,
            bos_token_id=1,
            eos_token_id=2,
            **extra,
        )

    return build


def _gemma2(s: Shape, layers: int) -> Any:
    return transformers.Gemma2Config(
        hidden_size=s.hidden,
        intermediate_size=s.ffn,
        num_hidden_layers=layers,
        num_attention_heads=s.heads,
        num_key_value_heads=s.kv_heads,
        head_dim=s.head_dim,
        query_pre_attn_scalar=s.head_dim,
        vocab_size=s.vocab,
        max_position_embeddings=4096,
    )


def _phi3(s: Shape, layers: int) -> Any:
    return transformers.Phi3Config(
        hidden_size=s.hidden,
        intermediate_size=s.ffn,
        num_hidden_layers=layers,
        num_attention_heads=s.heads,
        num_key_value_heads=s.kv_heads,
        vocab_size=s.vocab,
        max_position_embeddings=4096,
        original_max_position_embeddings=4096,
        pad_token_id=0,
        bos_token_id=1,
        eos_token_id=2,
    )


def _gpt2(dropout: float) -> Callable[[Shape, int], Any]:
    def build(s: Shape, layers: int) -> Any:
        return transformers.GPT2Config(
            n_embd=s.hidden,
            n_head=s.heads,
            n_inner=s.ffn,
            n_layer=layers,
            vocab_size=s.vocab,
            n_positions=4096,
            resid_pdrop=dropout,
            embd_pdrop=dropout,
            attn_pdrop=dropout,
            bos_token_id=0,
            eos_token_id=0,
        )

    return build


def _gpt_neox(s: Shape, layers: int) -> Any:
    return transformers.GPTNeoXConfig(
        hidden_size=s.hidden,
        num_attention_heads=s.heads,
        intermediate_size=s.ffn,
        num_hidden_layers=layers,
        vocab_size=s.vocab,
        max_position_embeddings=4096,
    )


def _mixtral(s: Shape, layers: int) -> Any:
    return transformers.MixtralConfig(
        hidden_size=s.hidden,
        intermediate_size=s.ffn,
        num_hidden_layers=layers,
        num_attention_heads=s.heads,
        num_key_value_heads=s.kv_heads,
        head_dim=s.head_dim,
        vocab_size=s.vocab,
        num_local_experts=s.experts,
        num_experts_per_tok=s.top_k,
        max_position_embeddings=4096,
        pad_token_id=0,
    )


GQA_BASE = Shape(hidden=512, heads=8, kv_heads=2, head_dim=64, ffn=1408, vocab=8000)
MHA_BASE = Shape(hidden=512, heads=8, kv_heads=8, head_dim=64, ffn=2048, vocab=8000)
MOE_BASE = replace(GQA_BASE, ffn=704, experts=8, top_k=2)

ARCHS: dict[str, Arch] = {
    a.name: a
    for a in [
        Arch("llama", "llama", GQA_BASE, True, True, _llama_like("LlamaConfig"), {}),
        Arch("mistral", "mistral", GQA_BASE, True, True, _llama_like("MistralConfig"), {}),
        Arch("qwen2", "qwen2", GQA_BASE, True, True, _llama_like("Qwen2Config"), {}),
        Arch("qwen3", "qwen3", GQA_BASE, True, True, _llama_like("Qwen3Config"), {}),
        Arch("gemma2", "gemma2", GQA_BASE, True, True, _gemma2, {}),
        Arch("phi3", "phi3", replace(GQA_BASE, kv_heads=8), False, True, _phi3, {}),
        Arch("gpt2", "gpt2", MHA_BASE, False, False, _gpt2(0.1), {}),
        Arch("gpt2_nodrop", "gpt2", MHA_BASE, False, False, _gpt2(0.0), {}),
        Arch("gpt_neox", "gpt_neox", MHA_BASE, False, False, _gpt_neox, {}),
        Arch("mixtral", "mixtral", MOE_BASE, True, True, _mixtral, {}),
        Arch(
            "mixtral_eager_experts",
            "mixtral",
            MOE_BASE,
            True,
            True,
            _mixtral,
            {"experts_implementation": "eager"},
        ),
    ]
}


def points_for(arch: Arch) -> list[Point]:
    """Base point plus one-factor-at-a-time variations (so each dependence can be separated)."""
    b = arch.base
    pts = [
        Point("base", b, 256, 1),
        Point("seq128", b, 128, 1),
        Point("seq512", b, 512, 1),
        Point("batch2", b, 256, 2),
        Point("vocab1000", replace(b, vocab=1000), 256, 1),
        Point("ffn_x2", replace(b, ffn=b.ffn * 2), 256, 1),
    ]
    if arch.free_head_dim:
        # hidden changes alone; q/kv widths stay at heads*head_dim.
        pts.append(Point("hidden256", replace(b, hidden=256), 256, 1))
        # fewer, wider heads: q width and kv width (kv_heads*head_dim) unchanged.
        pts.append(
            Point("heads4", replace(b, heads=4, head_dim=128, kv_heads=max(1, b.kv_heads // 2)), 256, 1)
        )
    else:
        pts.append(Point("hidden256", replace(b, hidden=256, head_dim=32), 256, 1))
        kv4 = 4 if b.kv_heads == b.heads else max(1, b.kv_heads // 2)
        pts.append(Point("heads4", replace(b, heads=4, head_dim=128, kv_heads=kv4), 256, 1))
    if arch.supports_gqa:
        other_kv = b.heads if b.kv_heads != b.heads else 2
        pts.append(Point("mha" if other_kv == b.heads else "gqa", replace(b, kv_heads=other_kv), 256, 1))
    if b.experts:
        pts.append(Point("experts4_top1", replace(b, experts=4, top_k=1), 256, 1))
    return pts
