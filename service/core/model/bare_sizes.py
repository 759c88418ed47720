"""What a bare size ("7B", "1.3b", "125M", 7e9) stands for, and a description of the assumption.

Sizes listed in ``service/data/bare_sizes.json`` map to a named standard architecture (the GPT-3
paper's shapes, Llama 2/3 and GPT-3 presets). Any other size gets a Llama-style shape made by
:func:`generated_architecture`, whose rule is:

* width: geometric interpolation, in log(parameters), between the widths of standard models
  (``WIDTH_ANCHORS``); past either end the width grows as parameters^(1/3), which keeps the
  depth-to-width ratio when both scale together (parameters ~ layers x hidden^2);
* heads of 128 (64 below hidden 1024), hidden a whole number of heads (4 heads from 2048); from
  30B up, grouped-query attention with 8 KV heads (Llama 2 70B, Llama 3), hidden a multiple of 8
  heads; the two embedding tables kept under half of the total;
* SwiGLU FFN near 8/3 x hidden in multiples of 256 (Llama's rule), RMSNorm, rotary, untied
  32000-token vocabulary (Llama 2's tokenizer);
* depth: the layer count whose total is nearest the asked size, the FFN width then re-rounded
  (multiples of 256 between 2x and 4x hidden) to land within 0.5%; where no width does, the
  nearest depth that does (or else the closest pair).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from itertools import pairwise
from typing import Any

from service.core.errors import InvalidInput
from service.core.model.architecture import Architecture
from service.core.model.params import dense_mlp_params, layer_params, parameter_count
from service.core.model.presets import DATA_PACKAGE, find_preset

TABLE_FILE = "bare_sizes.json"
MIN_SIZE = 50e6  # below this the 32000-token embedding tables would be most of it
MAX_SIZE = 10e12
MATCH_TOLERANCE = 1e-3  # a size within 0.1% of a listed one is that one ("7.0B", 7e9)
BILLIONS_BELOW = 10_000  # a number with no unit below this is read in billions ("7" -> 7B)

# (parameters, hidden) of standard shapes: GPT-3 Small/Medium/XL/2.7B/6.7B (Brown et al. 2020,
# table 2.1), Llama 2 13B, LLaMA 33B and 65B (Touvron et al. 2023), Llama 3.1 405B.
WIDTH_ANCHORS: tuple[tuple[float, int], ...] = (
    (125e6, 768),
    (350e6, 1024),
    (1.3e9, 2048),
    (2.7e9, 2560),
    (6.7e9, 4096),
    (13e9, 5120),
    (32.5e9, 6656),
    (65e9, 8192),
    (405e9, 16384),
)
GQA_FROM = 30e9
GQA_KV_HEADS = 8
VOCAB = 32000
FFN_STEP = 256
TARGET_ERROR = 0.005  # a generated shape lands within 0.5% of the asked size where it can

_UNITS = {
    "": 1.0, "k": 1e3, "thousand": 1e3, "m": 1e6, "mn": 1e6, "million": 1e6,
    "b": 1e9, "bn": 1e9, "billion": 1e9, "t": 1e12, "trillion": 1e12,
}  # fmt: skip
_SIZE = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(e[+-]?\d+)?([a-z]*?)(?:params|parameters)?")


@dataclass(frozen=True, slots=True)
class SizeEntry:
    """One listed size: its label, its parameter count and the architecture it maps to."""

    size: str
    params: float
    basis: str  # the standard model, "Llama 2 7B"
    source: str  # where its shape comes from
    arch: Architecture


def format_count(count: float) -> str:
    """7e9 -> "7B", 1.3e9 -> "1.3B", 124439808 -> "124M", 405.85e9 -> "406B"."""
    for scale, unit in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if count >= scale:
            return f"{count / scale:.3g}{unit}"
    return f"{count:.0f}"


def parse_size(value: str | float) -> float:
    """A parameter count from "7B", "1.3b", "125M", "7e9", "7 billion", 7e9 or 7 (billions)."""
    accepted = "a size like 7B, 1.3B, 125M or 7e9"
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise InvalidInput("model", f"{value!r} is not a model size", accepted)
    if isinstance(value, str):
        text = re.sub(r"[\s,_]", "", value.lower())
        match = _SIZE.fullmatch(text)
        if match is None or match.group(3) not in _UNITS:
            raise InvalidInput("model", f"{value!r} is not a model size", accepted)
        number = float(match.group(1) + (match.group(2) or ""))
        unit = match.group(3)
    else:
        number, unit = float(value), ""
    if not math.isfinite(number) or number <= 0:
        raise InvalidInput("model", f"{value!r} is not a model size", accepted)
    count = number * (1e9 if unit == "" and number < BILLIONS_BELOW else _UNITS[unit])
    if not MIN_SIZE <= count <= MAX_SIZE:
        raise InvalidInput(
            "model",
            f"{format_count(count)} parameters is outside the sizes fitcheck can stand in for",
            f"{format_count(MIN_SIZE)} to {format_count(MAX_SIZE)}",
        )
    return count


def _entry(item: dict[str, Any]) -> SizeEntry:
    if "preset" in item:
        arch = find_preset(str(item["preset"])).arch
    else:
        arch = Architecture.from_dict({**item["arch"], "name": f"{item['size']} ({item['basis']})"})
    return SizeEntry(size=str(item["size"]), params=float(item["params"]), basis=str(item["basis"]),
                     source=str(item["source"]), arch=arch)  # fmt: skip


@cache
def size_table() -> tuple[SizeEntry, ...]:
    """The listed sizes, read once from the package data."""
    text = resources.files(DATA_PACKAGE).joinpath(TABLE_FILE).read_text(encoding="utf-8")
    return tuple(_entry(item) for item in json.loads(text)["sizes"])


def _width(count: float) -> float:
    """Hidden size before rounding: log-linear between anchors, cube-root scaling outside."""
    first, last = WIDTH_ANCHORS[0], WIDTH_ANCHORS[-1]
    if count <= first[0]:
        return first[1] * math.pow(count / first[0], 1 / 3)
    if count >= last[0]:
        return last[1] * math.pow(count / last[0], 1 / 3)
    for (n0, h0), (n1, h1) in pairwise(WIDTH_ANCHORS):
        if n0 <= count <= n1:
            return h0 * math.pow(h1 / h0, math.log(count / n0) / math.log(n1 / n0))
    raise AssertionError("unreachable: anchors cover the range")


def _hidden_step(raw: float, gqa: bool) -> int:
    """Round widths to whole heads: 8 heads of 128 with GQA (so 8 KV heads divide them), 4 heads
    from hidden 2048, one head of 128 from 1024, one head of 64 below."""
    if gqa:
        return GQA_KV_HEADS * 128
    if raw >= 2048:
        return 4 * 128
    return 128 if raw >= 1024 else 64


def generated_architecture(count: float) -> Architecture:
    """A Llama-style architecture of about ``count`` parameters (rule in the module docstring)."""
    raw = _width(count)
    gqa = count >= GQA_FROM
    step = _hidden_step(raw, gqa)
    hidden = max(step, round(raw / step) * step)
    # Small models: keep the two embedding tables at most half of the total.
    while hidden > step and 2 * VOCAB * hidden > count / 2:
        hidden -= step
    head_dim = 128 if hidden >= 1024 else 64
    heads = hidden // head_dim
    trial = Architecture(
        layers=1, hidden=hidden, heads=heads, kv_heads=GQA_KV_HEADS if gqa else heads,
        head_dim=head_dim, ffn=math.ceil(8 * hidden / 3 / FFN_STEP) * FFN_STEP, vocab=VOCAB,
        name=f"llama-style-{format_count(count)}",
    )  # fmt: skip
    per_layer = layer_params(trial)
    outside = parameter_count(trial) - per_layer  # embeddings, output head, final norm
    without_mlp = per_layer - dense_mlp_params(trial, trial.ffn)
    nearest = max(1, round((count - outside) / per_layer))
    # Depths from the nearest one outwards, each with the FFN width (a multiple of 256 between 2x
    # and 4x hidden) that brings the total closest to the asked size: the first pair within
    # TARGET_ERROR wins, else the closest pair.
    depths = sorted(range(max(1, nearest * 3 // 4), nearest * 5 // 4 + 2),
                    key=lambda layers: abs(layers - nearest))  # fmt: skip
    best: tuple[float, int, int] | None = None
    for layers in depths:
        exact = (count - outside - layers * without_mlp) / (3 * hidden * layers)
        ffn = min(4 * hidden, max(2 * hidden, round(exact / FFN_STEP) * FFN_STEP))
        ffn = max(FFN_STEP, ffn - ffn % FFN_STEP)
        error = abs(outside + layers * (without_mlp + 3 * hidden * ffn) - count) / count
        if best is None or error < best[0]:
            best = (error, layers, ffn)
        if error <= TARGET_ERROR:
            break
    assert best is not None
    return trial.with_changes(layers=best[1], ffn=best[2])


def describe(arch: Architecture) -> str:
    """One line: "32 layers, hidden 4096, 32 heads of 128 (MHA), ...; 6.74B parameters"."""
    heads = f"{arch.heads} head{'s' if arch.heads > 1 else ''}"
    if arch.mla is not None:
        attention = f"{heads} with latent attention (KV rank {arch.mla.kv_lora_rank})"
    elif arch.kv_heads_resolved == arch.heads:
        attention = f"{heads} of {arch.head_dim_resolved} (MHA)"
    else:
        kind = "MQA" if arch.kv_heads_resolved == 1 else "GQA"
        attention = (f"{arch.heads} query / {arch.kv_heads_resolved} KV heads of "
                     f"{arch.head_dim_resolved} ({kind})")  # fmt: skip
    if arch.mlp == "gated":
        mlp = "SwiGLU" if arch.activation == "silu" else f"gated {arch.activation}"
    else:
        mlp = f"{arch.activation} MLP"
    mlp = f"{mlp} FFN {arch.ffn}"
    if arch.moe is not None:
        mlp = (f"{arch.moe.experts} experts, top-{arch.moe.experts_per_token}, "
               f"expert FFN {arch.moe.expert_ffn}")  # fmt: skip
    norm = "RMSNorm" if arch.norm == "rmsnorm" else "LayerNorm"
    embeddings = "tied" if arch.tied_embeddings else "untied"
    parts = [f"{arch.layers} layers", f"hidden {arch.hidden}", attention, mlp, norm,
             f"vocab {arch.vocab} ({embeddings})"]  # fmt: skip
    if arch.positions == "learned":
        parts.append(f"learned positions {arch.max_positions}")
    return f"{', '.join(parts)}; {format_count(parameter_count(arch))} parameters"


def _standard(count: float) -> SizeEntry | None:
    for entry in size_table():
        if abs(count - entry.params) <= MATCH_TOLERANCE * entry.params:
            return entry
    return None


def bare_size_label(value: str | float) -> str:
    """'7B = Llama 2 7B shape', '13.5B = Llama-style shape': what a bare size was read as."""
    count = parse_size(value)
    entry = _standard(count)
    shape = f"{entry.basis} shape" if entry is not None else "Llama-style shape"
    return f"{format_count(count)} = {shape}"


def resolve_bare_size(value: str | float) -> tuple[Architecture, str]:
    """The architecture a bare size stands for, and a sentence saying what was assumed."""
    count = parse_size(value)
    label = format_count(count)
    entry = _standard(count)
    if entry is not None:
        return entry.arch, (
            f"{label} → {entry.basis} shape ({entry.source}): {describe(entry.arch)}"
        )
    arch = generated_architecture(count)
    return arch, (
        f"{label} → no standard model of this size; generated Llama-style shape (width "
        f"interpolated between standard models, heads of {arch.head_dim}, SwiGLU FFN ≈ 8/3 x "
        f"hidden): {describe(arch)}"
    )
