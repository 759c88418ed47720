"""A custom architecture: a pasted ``config.json``, or the numbers the binder read for layers,
hidden size, heads... ("48 layers, d_model 6144, 48 heads, 8 kv heads, vocab 100k",
``--num-layers 48 --hidden-size 6144``).

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
from service.parser.scan import Scan

_PLAIN = re.compile(r"\b(?:gelu|relu|plain|non[\s\-]?gated|standard|vanilla|4x)\s+(?:mlp|ffn)\b")
_GATED = re.compile(r"\bswiglu\b|\bgeglu\b|\bgated\s+(?:mlp|ffn)\b")
_TIED = re.compile(r"\btied\s+embeddings?\b|\btie_word_embeddings\s*[=:]\s*true\b")
_UNTIED = re.compile(r"\buntied\b|--untie-embeddings|\btie_word_embeddings\s*[=:]\s*false\b")
_MQA = re.compile(r"\bmqa\b|\bmulti[\s\-]query\b")
_CONFIG_KEYS = re.compile(r"[\"'](?:num_hidden_layers|hidden_size|n_layer|n_embd|model_type|num_layers)"
                          r"[\"']\s*:")


def find_pasted_config(scan: Scan) -> None:
    """Add an ``arch`` finding for a pasted Hugging Face ``config.json``."""
    config = _pasted_config(scan)
    if config is not None:
        scan.add("arch", config, note="architecture from the pasted config.json")


def add_architecture(scan: Scan, found: dict[str, int], vocab: int | None, start: int, end: int) -> None:
    """The architecture from its bound numbers ("48 layers, hidden 6144, ..."): ``arch`` when
    layers and hidden are both given, ``_arch_partial`` when only some numbers are."""
    if "arch" in {f.field for f in scan.findings}:
        return
    if "layers" in found and "hidden" in found:
        scan.add("arch", complete(found, vocab, scan), start, end)
    elif len(found) >= 2 or (("layers" in found or "hidden" in found) and len(found) + bool(vocab) >= 2):
        scan.add("_arch_partial", sorted(found), claim=False)


def complete(found: dict[str, int], vocab: int | None, scan: Scan) -> dict[str, Any]:
    view = scan.low
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
