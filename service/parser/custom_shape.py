"""A custom architecture in words ("48 layers, d_model 6144, 48 heads, 8 kv heads, vocab 100k"),
as Megatron flags (``--num-layers 48 --hidden-size 6144``), or a pasted ``config.json``.

Layers and hidden size are essential; what else is missing gets a stated default: heads of 128,
multi-head attention, a SwiGLU FFN of 8/3 x hidden rounded up to a multiple of 256 (4 x hidden for
a plain MLP), a 32,000-token vocabulary. Vocabulary sizes read ``k`` as 1000 ("100k" = 100,000).
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from service.core.model.hf_config import looks_like_hf_config
from service.parser.numbers import NUM, decimal_count
from service.parser.scan import Scan

_V = r"\s*[\"']?\s*(?:of|=|:)?\s*(?P<n>\d+)\b"
_KEYED: tuple[tuple[str, re.Pattern[str]], ...] = (  # "hidden 4096", "--num-layers 48"
    ("expert_ffn", re.compile(r"\b(?:expert[\s_\-]*ffn|moe[\s_\-]*(?:intermediate|ffn[\s_\-]*hidden)"
                              rf"[\s_\-]*size){_V}")),
    ("kv_heads", re.compile(r"\b(?:n_kv_heads|num[\s_\-]*key[\s_\-]*value[\s_\-]*heads|kv[\s_\-]*heads|"
                            rf"num[\s_\-]*query[\s_\-]*groups|query[\s_\-]*groups|gqa(?:[\s_\-]*groups)?){_V}")),
    ("layers", re.compile(rf"\b(?:n_layers?|num[\s_\-]*(?:hidden[\s_\-]*)?layers|layers|depth){_V}")),
    ("hidden", re.compile(r"\b(?:d_?model|hidden(?:[\s_\-]*(?:size|dim))?|model[\s_\-]*dim|n_embd|"
                          rf"embed(?:ding)?[\s_\-]*dim|width){_V}")),
    ("ffn", re.compile(r"\b(?:ffn(?:[\s_\-]*(?:hidden))?(?:[\s_\-]*(?:dim|size))?|"
                       r"intermediate(?:[\s_\-]*size)?|"
                       rf"d_ff|mlp[\s_\-]*(?:dim|size|hidden)){_V}")),
    ("heads", re.compile(rf"\b(?:n_heads?|num[\s_\-]*(?:attention[\s_\-]*)?heads|heads){_V}")),
    ("experts", re.compile(rf"\b(?:num[\s_\-]*(?:local[\s_\-]*)?experts|n_experts|experts){_V}")),
    ("top_k", re.compile(r"\b(?:top[\s\-_]*k?|experts_per_tok|moe[\s\-_]*router[\s\-_]*topk|"
                         r"num_experts_per_tok)\s*(?:=|:)?\s*(?P<n>\d+)\b")),
)
_NUMBER_FIRST: tuple[tuple[str, re.Pattern[str]], ...] = (  # "4096 hidden", "48 layers"
    ("kv_heads", re.compile(r"(?<![\w.])(?P<n>\d+)[\s\-]*(?:kv|key[\s\-]*value|query[\s\-]*groups|gqa)"
                            r"(?:[\s\-]*(?:heads?|groups))?\b(?![\s\-_]*cache)")),
    ("layers", re.compile(r"(?<![\w.])(?P<n>\d+)[\s\-]*(?:transformer\s+)?(?:layers?|blocks)\b")),
    ("hidden", re.compile(r"(?<![\w.])(?P<n>\d+)[\s\-]*(?:hidden(?:\s+size)?|d_?model|model\s+dim|width)\b")),
    ("ffn", re.compile(r"(?<![\w.])(?P<n>\d+)[\s\-]*(?:ffn|intermediate|d_ff)\b")),
    ("heads", re.compile(r"(?<![\w.])(?P<n>\d+)[\s\-]*(?:attention\s+|attn\s+|query\s+|q\s+)?heads\b")),
    ("experts", re.compile(r"(?<![\w.])(?P<n>\d+)\s*(?:routed\s+)?experts\b(?!\s+per)")),
    ("top_k", re.compile(r"(?<![\w.])(?P<n>\d+)\s*(?:active\s+)?experts\s+per\s+token")),
)
_VOCAB = re.compile(r"\b(?:vocab(?:ulary)?(?:[\s_\-]*size)?|padded[\s_\-]*vocab[\s_\-]*size)"
                    r"\s*[\"']?\s*(?:of|=|:)?\s*"
                    rf"(?P<num>{NUM})\s*(?P<unit>k)?\b|(?<![\w.])(?P<num2>{NUM})\s*(?P<unit2>k)?\s*(?:token\s+)?vocab")
# A number outside these ranges belongs to the neighbouring name ("ffn 14336 gqa 8").
_PLAUSIBLE = {"layers": (1, 1000), "hidden": (64, 1_000_000), "heads": (1, 1024),
              "kv_heads": (1, 1024), "ffn": (64, 10_000_000), "experts": (2, 100_000),
              "top_k": (1, 64), "expert_ffn": (16, 10_000_000)}
_PLAIN = re.compile(r"\b(?:gelu|relu|plain|non[\s\-]?gated|standard|vanilla|4x)\s+(?:mlp|ffn)\b")
_GATED = re.compile(r"\bswiglu\b|\bgeglu\b|\bgated\s+(?:mlp|ffn)\b")
_TIED = re.compile(r"\btied\s+embeddings?\b|\btie_word_embeddings\s*[=:]\s*true\b")
_UNTIED = re.compile(r"\buntied\b|--untie-embeddings|\btie_word_embeddings\s*[=:]\s*false\b")
_MQA = re.compile(r"\bmqa\b|\bmulti[\s\-]query\b")
_CONFIG_KEYS = re.compile(r"[\"'](?:num_hidden_layers|hidden_size|n_layer|n_embd|model_type|num_layers)"
                          r"[\"']\s*:")


def find_architecture(scan: Scan) -> None:
    """Add an ``arch`` finding (a pasted config.json, or our fields) when layers and hidden are
    both given; ``_arch_partial`` when only some architecture numbers are."""
    config = _pasted_config(scan)
    if config is not None:
        scan.add("arch", config, note="architecture from the pasted config.json")
        return
    found: dict[str, int] = {}
    spans: list[tuple[int, int]] = []
    for name, pattern in _in_style(scan):
        for m in scan.finditer(pattern):
            overlaps = any(m.start() < e and s < m.end() for s, e in spans)
            low, high = _PLAUSIBLE[name]
            if name not in found and not overlaps and low <= int(m.group("n")) <= high \
                    and scan.free(m.start(), m.end()):
                found[name] = int(m.group("n"))
                spans.append((m.start(), m.end()))
    vocab = _vocab(scan, spans)
    view = scan.view()
    if "layers" in found and "hidden" in found:
        for start, end in spans:
            scan.claim(start, end)
        scan.add("arch", _complete(found, vocab, view, scan))
    elif len(found) >= 2 or (("layers" in found or "hidden" in found) and len(found) + bool(vocab) >= 2):
        scan.add("_arch_partial", sorted(found))


def _in_style(scan: Scan) -> tuple[tuple[str, re.Pattern[str]], ...]:
    """Both pattern sets, the writer's style first: "24 layers 2048 hidden" reads numbers before
    their names, "layers 32 hidden 4096" after (either set alone would misread the other)."""
    view = scan.view()

    def first(patterns: tuple[tuple[str, re.Pattern[str]], ...]) -> int:
        starts = [m.start() for name, p in patterns if name in ("layers", "hidden")
                  for m in [p.search(view)] if m is not None]
        return min(starts, default=len(view))

    if first(_NUMBER_FIRST) < first(_KEYED):
        return _NUMBER_FIRST + _KEYED
    return _KEYED + _NUMBER_FIRST


def _vocab(scan: Scan, spans: list[tuple[int, int]]) -> int | None:
    for m in scan.finditer(_VOCAB):
        num, unit = m.group("num") or m.group("num2"), m.group("unit") or m.group("unit2")
        spans.append((m.start(), m.end()))
        return decimal_count(num, unit)
    return None


def _complete(found: dict[str, int], vocab: int | None, view: str, scan: Scan) -> dict[str, Any]:
    hidden = found["hidden"]
    notes: list[str] = []
    heads = found.get("heads") or max(1, hidden // 128)
    if "heads" not in found:
        notes.append(f"{heads} heads of 128")
    megatron = "--num-layers" in view
    plain = bool(_PLAIN.search(view)) or (megatron and not _GATED.search(view))
    ffn = found.get("ffn") or (4 * hidden if plain else -(-hidden * 8 // 3 // 256) * 256)
    if "ffn" not in found:
        notes.append(f"{'plain' if plain else 'SwiGLU'} FFN {ffn}")
    arch: dict[str, Any] = {"name": "custom", "layers": found["layers"], "hidden": hidden, "heads": heads,
                            "vocab": vocab or 32000, "ffn": ffn, "mlp": "plain" if plain else "gated"}
    if vocab is None:
        notes.append("vocab 32,000")
    kv = 1 if _MQA.search(view) else found.get("kv_heads")
    if kv:
        arch["kv_heads"] = kv
    elif "heads" in found:
        notes.append("multi-head attention (KV heads = heads)")
    if plain:
        arch["activation"] = "gelu"
    if _TIED.search(view) or (megatron and not _UNTIED.search(view)):
        arch["tied_embeddings"] = True
    if "experts" in found:
        top = found.get("top_k", 2)
        arch["moe"] = {"experts": found["experts"], "experts_per_token": top,
                       "expert_ffn": found.get("expert_ffn", ffn)}
        if "top_k" not in found:
            notes.append("top-2 routing")
    if notes:
        scan.notes.append("custom architecture: " + ", ".join(notes) + " (not stated)")
    return arch


def _pasted_config(scan: Scan) -> dict[str, Any] | None:
    text = scan.text
    key = _CONFIG_KEYS.search(text)
    if key is None:
        return None
    start = text.rfind("{", 0, key.start())
    end = text.rfind("}")
    if start < 0 or end <= start:
        return None
    body = text[start:end + 1]
    data: Any = None
    try:
        data = json.loads(body)
    except ValueError:
        try:
            data = ast.literal_eval(body) if len(body) < 20_000 else None
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            data = None
    if not looks_like_hf_config(data) or not isinstance(data, dict):
        return None
    scan.claim(start, end + 1)
    return data
