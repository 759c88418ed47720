"""One typed description of a decoder-only transformer, with validation.

Field names follow the vocabulary people use (layers, hidden, heads, kv_heads, ffn, vocab);
`hf_config.py` maps Hugging Face ``config.json`` names onto them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Literal

from service.core.errors import InvalidInput
from service.core.model.arch_parts import (
    MAX_WIDTH,
    check_int,
    validate_linear_attention,
    validate_mla,
    validate_moe,
    validate_vision,
)
from service.core.model.arch_parts import MLA as MLA
from service.core.model.arch_parts import LinearAttention as LinearAttention
from service.core.model.arch_parts import MoE as MoE
from service.core.model.arch_parts import VisionTower as VisionTower

MlpKind = Literal["gated", "plain"]
NormKind = Literal["rmsnorm", "layernorm"]
PositionKind = Literal["rotary", "learned", "alibi"]

MAX_LAYERS = 1_000
MAX_VOCAB = 10_000_000
MAX_HEADS = 10_000
MAX_MTP_LAYERS = 8

_PARTS: dict[str, type[Any]] = {
    "moe": MoE, "mla": MLA, "linear_attention": LinearAttention, "vision": VisionTower,
}


@dataclass(frozen=True, slots=True)
class Architecture:
    """A decoder-only transformer, enough to count its parameters and its memory."""

    layers: int
    hidden: int
    heads: int
    vocab: int
    ffn: int
    kv_heads: int = 0  # 0 means heads (multi-head attention)
    head_dim: int = 0  # 0 means hidden // heads
    mlp: MlpKind = "gated"
    activation: str = "silu"
    norm: NormKind = "rmsnorm"
    norms_per_layer: int = 2  # Gemma 2/3 have 4 (pre and post norms around attention and MLP)
    qk_norm: bool = False  # per-head RMSNorm on queries and keys (Qwen3, Gemma 3)
    qk_norm_full: bool = False  # the q/k norms span all heads (OLMo 2): q_width + kv_width
    attn_bias: bool = False  # bias on the Q/K/V projections
    attn_out_bias: bool = False  # bias on the attention output projection
    mlp_bias: bool = False
    norm_bias: bool = True  # only read for LayerNorm; some LayerNorms (OLMo) have none
    tied_embeddings: bool = False
    positions: PositionKind = "rotary"
    max_positions: int = 0  # rows of the learned position table (only for learned positions)
    parallel_residual: bool = False  # attention and MLP read the same input (GPT-J, NeoX, Falcon)
    sliding_window: int = 0  # 0: every layer attends to the whole context
    sliding_window_layers: float = 1.0  # share of layers that use the window (Gemma 2: 0.5)
    dropout: float = 0.0  # residual/attention dropout probability used in training
    rotary_fraction: float = 1.0  # share of head_dim that is rotated (GPT-NeoX 0.25, Phi-2 0.4)
    attn_softcap: bool = False  # tanh soft-capping of attention logits (Gemma 2)
    final_softcap: bool = False  # tanh soft-capping of the output logits (Gemma 2)
    attn_sinks: bool = False  # a learned per-head logit in the softmax denominator (gpt-oss)
    attn_output_gate: bool = False  # q_proj also emits a sigmoid gate on the output (Qwen3-Next)
    mtp_layers: int = 0  # multi-token-prediction modules, outside the main model's count
    family: str = ""  # Hugging Face model_type: selects its modeling file's quirks (hf profile)
    moe: MoE | None = None
    mla: MLA | None = None
    linear_attention: LinearAttention | None = None  # hybrid: linear-attention token mixers
    vision: VisionTower | None = None  # vision-language models: the image encoder
    name: str = field(default="custom", compare=False)
    # an architecture keys many caches (parameter counts, saved tensors, model states): hashed
    # once, not field by field on every lookup
    _hash: int = field(default=0, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        validate(self)
        object.__setattr__(self, "_hash", hash(tuple(getattr(self, f) for f in _HASHED)))

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self) -> tuple[Any, ...]:
        # rebuilt by the constructor: another process hashes strings differently
        return (Architecture, tuple(getattr(self, f.name) for f in fields(self) if f.init))

    @property
    def kv_heads_resolved(self) -> int:
        return self.kv_heads or self.heads

    @property
    def head_dim_resolved(self) -> int:
        return self.head_dim or self.hidden // self.heads

    @property
    def q_width(self) -> int:
        """Width of all query heads together (heads x head_dim)."""
        return self.heads * self.head_dim_resolved

    @property
    def kv_width(self) -> int:
        """Width of all key (or value) heads together (kv_heads x head_dim)."""
        return self.kv_heads_resolved * self.head_dim_resolved

    @property
    def moe_layers(self) -> int:
        if self.moe is None:
            return 0
        eligible = self.layers - self.moe.dense_layers
        return len(range(self.moe.layer_step - 1, eligible, self.moe.layer_step))

    @property
    def dense_layers(self) -> int:
        return self.layers - self.moe_layers

    @property
    def attention_layers(self) -> int:
        """Layers with softmax attention, hence a KV cache (all but hybrid models' linear ones)."""
        if self.linear_attention is None:
            return self.layers
        return self.layers // self.linear_attention.full_attention_interval

    @property
    def linear_attention_layers(self) -> int:
        return self.layers - self.attention_layers

    def with_changes(self, **changes: Any) -> Architecture:
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        del data["_hash"]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Architecture:
        """Build from plain data (a preset file, an API body), naming any unknown field."""
        known = {f.name for f in fields(cls) if f.init}
        unknown = sorted(set(data) - known)
        if unknown:
            raise InvalidInput(
                f"arch.{unknown[0]}", "is not an architecture field", ", ".join(sorted(known))
            )
        values = dict(data)
        for key, kind in _PARTS.items():
            if isinstance(values.get(key), dict):
                values[key] = _sub(kind, values[key], key)
        try:
            return cls(**values)
        except TypeError as exc:
            raise InvalidInput("arch", str(exc), "the architecture fields") from exc


_HASHED = tuple(f.name for f in fields(Architecture) if f.compare)


def _sub(kind: type[Any], data: dict[str, Any], prefix: str) -> Any:
    known = {f.name for f in fields(kind)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise InvalidInput(f"arch.{prefix}.{unknown[0]}", "is not a field", ", ".join(sorted(known)))
    try:
        return kind(**data)
    except TypeError as exc:
        raise InvalidInput(f"arch.{prefix}", str(exc), ", ".join(sorted(known))) from exc


def validate(arch: Architecture) -> None:
    """Raise InvalidInput naming the first field whose value cannot describe a real model."""
    check_int("arch.layers", arch.layers, 1, MAX_LAYERS)
    check_int("arch.hidden", arch.hidden, 1, MAX_WIDTH)
    check_int("arch.heads", arch.heads, 1, MAX_HEADS)
    check_int("arch.vocab", arch.vocab, 1, MAX_VOCAB)
    check_int("arch.ffn", arch.ffn, 0 if arch.moe else 1, MAX_WIDTH)
    check_int("arch.kv_heads", arch.kv_heads, 0, MAX_HEADS)
    check_int("arch.head_dim", arch.head_dim, 0, MAX_WIDTH)
    check_int("arch.norms_per_layer", arch.norms_per_layer, 0, 8)
    check_int("arch.max_positions", arch.max_positions, 0, 100_000_000)
    check_int("arch.sliding_window", arch.sliding_window, 0, 100_000_000)
    if arch.head_dim == 0 and arch.mla is None and arch.hidden % arch.heads:
        raise InvalidInput(
            "arch.heads",
            f"{arch.heads} heads do not divide hidden {arch.hidden}",
            "a head count that divides hidden, or an explicit head_dim",
        )
    if arch.kv_heads and arch.heads % arch.kv_heads:
        raise InvalidInput(
            "arch.kv_heads",
            f"{arch.kv_heads} KV heads do not divide {arch.heads} query heads",
            f"a divisor of {arch.heads} (1 for MQA, {arch.heads} for MHA)",
        )
    if arch.mlp not in ("gated", "plain"):
        raise InvalidInput("arch.mlp", f"unknown MLP kind {arch.mlp!r}", "gated or plain")
    if arch.norm not in ("rmsnorm", "layernorm"):
        raise InvalidInput("arch.norm", f"unknown norm {arch.norm!r}", "rmsnorm or layernorm")
    if arch.positions not in ("rotary", "learned", "alibi"):
        raise InvalidInput("arch.positions", f"unknown kind {arch.positions!r}", "rotary, learned or alibi")
    if arch.positions == "learned" and arch.max_positions < 1:
        raise InvalidInput(
            "arch.max_positions", "learned positions need a table size", "an integer >= 1"
        )
    if not 0.0 <= arch.dropout < 1.0:
        raise InvalidInput("arch.dropout", f"{arch.dropout} is not a probability", "0 <= dropout < 1")
    if not 0.0 < arch.rotary_fraction <= 1.0:
        raise InvalidInput("arch.rotary_fraction", f"{arch.rotary_fraction} is not a fraction",
                           "0 < rotary_fraction <= 1")
    if not 0.0 <= arch.sliding_window_layers <= 1.0:
        raise InvalidInput(
            "arch.sliding_window_layers", f"{arch.sliding_window_layers} is not a fraction", "0..1"
        )
    check_int("arch.mtp_layers", arch.mtp_layers, 0, MAX_MTP_LAYERS)
    if arch.moe is not None:
        validate_moe(arch.moe, arch.layers)
    if arch.mla is not None:
        validate_mla(arch.mla)
    if arch.linear_attention is not None:
        validate_linear_attention(arch.linear_attention, arch.layers)
    if arch.vision is not None:
        validate_vision(arch.vision)
