"""Check closed-form saved-activation formulas against the measured records.

For every record of ``cpu_activations.json`` the formula below predicts ``saved_bytes`` as

    L * (T * per_layer_per_token + per_layer_const) + non_layer(T, b, s)

with T = batch * seq tokens. The script prints, per architecture and attention implementation,
the measured per-layer bytes per token (m(L=2) - m(L=1)) and non-layer bytes per token
(2 m(L=1) - m(L=2)) next to the formulas, and lists every record predicted worse than 2 %.

Symbols: h hidden, q = heads*head_dim, kv = kv_heads*head_dim, f ffn (expert ffn for MoE),
a heads, g kv heads, s seq, b batch, V vocab, d_rot rotary dims (head_dim * partial factor),
E experts, k experts per token, p dropout.

Run ``python bench/measure/analyze.py bench/measure/results/cpu_activations.json``.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Dims:
    h: int
    q: int
    kv: int
    f: int
    a: int
    g: int
    d_rot: float
    V: int
    E: int
    k: int
    s: int
    b: int
    L: int
    p: float

    @property
    def T(self) -> int:
        return self.s * self.b

    @property
    def kvx(self) -> int:
        """Width of the K/V that eager attention saves after repeat_kv: the expanded copy (q)
        for GQA, but a stride-0 view of the original (kv) when there is a single KV head."""
        return self.kv if self.g == 1 else self.q


def dims_of(rec: dict[str, Any]) -> Dims:
    c = rec["config"]
    d = c["head_dim"]
    rope = c.get("rope_parameters") or {}
    partial = rope.get("partial_rotary_factor", 1.0) or 1.0
    return Dims(
        h=c["hidden_size"],
        q=c["num_attention_heads"] * d,
        kv=c["num_key_value_heads"] * d,
        f=c["intermediate_size"],
        a=c["num_attention_heads"],
        g=c["num_key_value_heads"],
        d_rot=d * partial,
        V=c["vocab_size"],
        E=c.get("num_local_experts") or 0,
        k=c.get("num_experts_per_tok") or 0,
        s=rec["seq"],
        b=rec["batch"],
        L=c["num_hidden_layers"],
        p=c.get("attn_pdrop") or 0.0,
    )


Fn = Callable[[Dims], float]


@dataclass(frozen=True)
class Formula:
    text: str
    fn: Fn


# --- per layer, bytes per token ---------------------------------------------------------------
RMS_SWIGLU = "16h + 8f + 8"
LAYER: dict[tuple[str, str], Formula] = {
    ("llama", "sdpa"): Formula(
        f"{RMS_SWIGLU} + 4q + 4kv + 4a",
        lambda x: 16 * x.h + 8 * x.f + 8 + 4 * x.q + 4 * x.kv + 4 * x.a,
    ),
    ("llama", "eager"): Formula(
        f"{RMS_SWIGLU} + 4q + 4kvx + 6as",
        lambda x: 16 * x.h + 8 * x.f + 8 + 4 * x.q + 4 * x.kvx + 6 * x.a * x.s,
    ),
    ("qwen3", "sdpa"): Formula(
        f"{RMS_SWIGLU} + 10q + 10kv + 8a + 4g",
        lambda x: 16 * x.h + 8 * x.f + 8 + 10 * x.q + 10 * x.kv + 8 * x.a + 4 * x.g,
    ),
    ("qwen3", "eager"): Formula(
        f"{RMS_SWIGLU} + 10q + 4kvx + 6kv + 4a + 4g + 6as",
        lambda x: (
            16 * x.h + 8 * x.f + 8 + 10 * x.q + 4 * x.kvx + 6 * x.kv + 4 * x.a + 4 * x.g + 6 * x.a * x.s
        ),
    ),
    ("phi3", "sdpa"): Formula(
        f"{RMS_SWIGLU} + 6q + 4kv + 4a",
        lambda x: 16 * x.h + 8 * x.f + 8 + 6 * x.q + 4 * x.kv + 4 * x.a,
    ),
    ("phi3", "eager"): Formula(
        f"{RMS_SWIGLU} + 4q + 4kvx + 6as",
        lambda x: 16 * x.h + 8 * x.f + 8 + 4 * x.q + 4 * x.kvx + 6 * x.a * x.s,
    ),
    ("gemma2", "eager"): Formula(
        "36h + 8f + 16 + 4q + 4kvx + 8as   (+ 16h bytes per layer, not per token)",
        lambda x: 36 * x.h + 8 * x.f + 16 + 4 * x.q + 4 * x.kvx + 8 * x.a * x.s,
    ),
    ("gpt_neox", "sdpa"): Formula(
        "6h + 4f + 8 + 6q + 4kv + 4a",
        lambda x: 6 * x.h + 4 * x.f + 8 + 6 * x.q + 4 * x.kv + 4 * x.a,
    ),
    ("gpt_neox", "eager"): Formula(
        "6h + 4f + 8 + 4q + 4kvx + 6as",
        lambda x: 6 * x.h + 4 * x.f + 8 + 4 * x.q + 4 * x.kvx + 6 * x.a * x.s,
    ),
    ("gpt2", "sdpa"): Formula("20h + 10f + 8 + 4a", lambda x: 20 * x.h + 10 * x.f + 8 + 4 * x.a),
    ("gpt2", "eager"): Formula(
        "20h + 10f + 8 + 2as   (16h when b > 1: q copied instead of a view of the fused qkv)",
        lambda x: (20 if x.b == 1 else 16) * x.h + 10 * x.f + 8 + 2 * x.a * x.s,
    ),
    ("gpt2_dropout", "sdpa"): Formula(
        "26h + 10f + 8 + 12as   (CPU math fallback in fp32)",
        lambda x: 26 * x.h + 10 * x.f + 8 + 12 * x.a * x.s,
    ),
    ("gpt2_dropout", "eager"): Formula(
        "24h + 10f + 8 + 6as   (20h when b > 1)",
        lambda x: (24 if x.b == 1 else 20) * x.h + 10 * x.f + 8 + 6 * x.a * x.s,
    ),
    ("mixtral", "sdpa"): Formula(
        "16h + 8 + 4q + 4kv + 4a + 4E + 12k + 4 + k(4h + 8f + 28)   (+ 4E bytes per layer)",
        lambda x: (
            16 * x.h
            + 8
            + 4 * x.q
            + 4 * x.kv
            + 4 * x.a
            + 4 * x.E
            + 12 * x.k
            + 4
            + x.k * (4 * x.h + 8 * x.f + 28)
        ),
    ),
    ("mixtral", "eager"): Formula(
        "16h + 8 + 4q + 4kvx + 6as + 4E + 12k + 4 + k(4h + 8f + 28)   (+ 4E bytes per layer)",
        lambda x: (
            16 * x.h
            + 8
            + 4 * x.q
            + 4 * x.kvx
            + 6 * x.a * x.s
            + 4 * x.E
            + 12 * x.k
            + 4
            + x.k * (4 * x.h + 8 * x.f + 28)
        ),
    ),
    ("mixtral_eager_experts", "sdpa"): Formula(
        "16h + 8 + 4q + 4kv + 4a + 4E + 12k + 4 + k(6h + 8f + 20)",
        lambda x: (
            16 * x.h
            + 8
            + 4 * x.q
            + 4 * x.kv
            + 4 * x.a
            + 4 * x.E
            + 12 * x.k
            + 4
            + x.k * (6 * x.h + 8 * x.f + 20)
        ),
    ),
    ("mixtral_eager_experts", "eager"): Formula(
        "16h + 8 + 4q + 4kvx + 6as + 4E + 12k + 4 + k(6h + 8f + 20)",
        lambda x: (
            16 * x.h
            + 8
            + 4 * x.q
            + 4 * x.kvx
            + 6 * x.a * x.s
            + 4 * x.E
            + 12 * x.k
            + 4
            + x.k * (6 * x.h + 8 * x.f + 20)
        ),
    ),
}

# bytes per layer that do not scale with tokens
LAYER_CONST: dict[str, Fn] = {
    "gemma2": lambda x: 16 * x.h,
    "mixtral": lambda x: 4 * x.E,
}

# --- non-layer part (embedding, rotary tables, final norm, lm_head input, loss) ---------------
# T-proportional terms, then per-position terms (shared by the batch: rotary cos/sin tables and
# GPT-2's position ids are built for one row), then the label storage and fp32 total_weight.
LABELS = "8bs + 8[b=1] + 4"
NON_LAYER: dict[str, Formula] = {
    "llama": Formula(
        f"T(8h + 12 + 4V) + 4s·d_rot + {LABELS}",
        lambda x: x.T * (8 * x.h + 12 + 4 * x.V) + 4 * x.s * x.d_rot,
    ),
    "gemma2": Formula(
        f"T(10h + 12 + 6V) + 4s·d_rot + 4h + {LABELS}",
        lambda x: x.T * (10 * x.h + 12 + 6 * x.V) + 4 * x.s * x.d_rot + 4 * x.h,
    ),
    "gpt2": Formula(
        f"T(4h + 12 + 4V) + 8s + {LABELS}",
        lambda x: x.T * (4 * x.h + 12 + 4 * x.V) + 8 * x.s,
    ),
    "gpt2_dropout": Formula(
        f"T(6h + 12 + 4V) + 8s + {LABELS}",
        lambda x: x.T * (6 * x.h + 12 + 4 * x.V) + 8 * x.s,
    ),
    "gpt_neox": Formula(
        f"T(4h + 12 + 4V) + 4s·d_rot + {LABELS}",
        lambda x: x.T * (4 * x.h + 12 + 4 * x.V) + 4 * x.s * x.d_rot,
    ),
}


def labels_bytes(x: Dims) -> float:
    """Shifted labels: a view of the (b, s+1) padded labels when b == 1, a (b, s) copy else."""
    return 8 * x.b * x.s + (8 if x.b == 1 else 0) + 4


# --- gradient checkpointing ----------------------------------------------------------------------
CKPT_LAYER = Formula("2h (the layer's input hidden states)", lambda x: 2 * x.h)
CKPT_EXTRA = (
    "non-layer + 8s (position_ids, not for gpt2) + with eager: 2bs² per distinct bf16 4-D mask "
    "(1; gemma2 with L ≥ 2: 2, sliding and full)"
)


def family(rec: dict[str, Any]) -> str:
    arch = rec["arch"]
    if arch in ("llama", "mistral", "qwen2"):
        return "llama"
    if arch == "gpt2":
        return "gpt2_dropout"
    if arch == "gpt2_nodrop":
        return "gpt2"
    return arch


def non_layer_family(fam: str) -> str:
    if fam in ("qwen3", "phi3", "mixtral", "mixtral_eager_experts"):
        return "llama"
    return fam


def ckpt_non_layer_extra(rec: dict[str, Any], x: Dims) -> float:
    extra = 8.0 * x.s if rec["arch"] not in ("gpt2", "gpt2_nodrop") else 0.0
    if rec["attn_implementation"] == "eager":
        masks = min(x.L, 2) if rec["arch"] == "gemma2" else 1
        extra += masks * 2 * x.b * x.s * x.s
    return extra


def predict(rec: dict[str, Any]) -> tuple[float, float, float]:
    """(per-layer bytes, non-layer bytes, total) predicted for one record."""
    x = dims_of(rec)
    fam = family(rec)
    attn = rec["attn_implementation"]
    nl = NON_LAYER[non_layer_family(fam)].fn(x) + labels_bytes(x)
    if rec["gradient_checkpointing"]:
        per_layer = x.T * CKPT_LAYER.fn(x)
        nl += ckpt_non_layer_extra(rec, x)
    else:
        const = LAYER_CONST.get(fam, lambda _: 0.0)(x)
        per_layer = x.T * LAYER[(fam, attn)].fn(x) + const
    return per_layer, nl, x.L * per_layer + nl


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("results")
    p.add_argument("--tolerance", type=float, default=0.02)
    p.add_argument("--all", action="store_true", help="print every record, not just misses")
    args = p.parse_args(argv)
    with open(args.results) as f:
        recs = json.load(f)["records"]

    print("## Per-layer and non-layer bytes per token at the base point (s=256, b=1)\n")
    print(
        "| arch | attn | ckpt | per-layer B/token measured | formula | non-layer B/token measured | formula |"
    )
    print("|---|---|---|---|---|---|---|")
    by_key = {
        (
            r["arch"],
            r["point"],
            r["attn_implementation"],
            r["gradient_checkpointing"],
            r["config"]["num_hidden_layers"],
        ): r
        for r in recs
    }
    for (arch, point, attn, ckpt, L), r1 in sorted(by_key.items()):
        if point != "base" or L != 1:
            continue
        r2 = by_key.get((arch, point, attn, ckpt, 2))
        if r2 is None:
            continue
        T = r1["tokens"]
        m1, m2 = r1["saved_bytes"], r2["saved_bytes"]
        p1, p2 = predict(r1)[2], predict(r2)[2]
        print(
            f"| {arch} | {attn} | {'on' if ckpt else 'off'} | {(m2 - m1) / T:.2f} | "
            f"{(p2 - p1) / T:.2f} | {(2 * m1 - m2) / T:.2f} | {(2 * p1 - p2) / T:.2f} |"
        )

    print("\n## Records vs formula\n")
    worst = 0.0
    misses = []
    for r in recs:
        _, _, total = predict(r)
        err = (total - r["saved_bytes"]) / r["saved_bytes"]
        worst = max(worst, abs(err))
        line = (
            f"{r['arch']:22} {r['point']:13} {r['attn_implementation']:5} "
            f"ckpt={'on ' if r['gradient_checkpointing'] else 'off'} "
            f"L={r['config']['num_hidden_layers']} measured={r['saved_bytes']:>11} "
            f"predicted={total:>13.0f} err={100 * err:+.3f}%"
        )
        if abs(err) > args.tolerance:
            misses.append(line)
        elif args.all:
            print(line)
    exact = sum(1 for r in recs if abs(predict(r)[2] - r["saved_bytes"]) < 0.5)
    print(
        f"{len(recs)} records, {exact} predicted to the byte, worst error {100 * worst:.3f}%, "
        f"{len(misses)} beyond {100 * args.tolerance:.0f}%"
    )
    for m in misses:
        print("MISS", m)
    return 1 if misses else 0


if __name__ == "__main__":
    raise SystemExit(main())
