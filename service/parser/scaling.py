"""Follow-ups that scale what the thread already has: "2x the context", "double the users",
"half the gpus", "twice as many nodes". The factor is read here; ``assemble`` applies it to the
previous request's value (and says so), or names it as not used when there is none.
"""

from __future__ import annotations

import re
from typing import Any

from service.parser.scan import Scan

_SCALE = re.compile(
    r"\b(?:(?P<word>double|twice|triple|quadruple|half|halve)|(?P<n>\d{1,3}(?:\.\d)?)\s*x)\s+"
    r"(?:the\s+|our\s+|as\s+many\s+|as\s+much\s+|as\s+long\s+(?:a\s+)?)?"
    r"(?P<what>context(?:\s+length)?|ctx|seq(?:uence)?(?:[\s_\-]*len(?:gth)?)?|users|concurrency|requests"
    r"|batch(?:\s*size)?|micro[\s\-]?batch|gpus|cards|nodes)\b")
_WORDS = {"double": 2.0, "twice": 2.0, "triple": 3.0, "quadruple": 4.0, "half": 0.5, "halve": 0.5}
_FIELD = {"context": "seq_len", "ctx": "seq_len", "users": "concurrent",
          "concurrency": "concurrent", "requests": "concurrent", "batch": "_batch", "micro": "micro_batch",
          "gpus": "gpu_count", "cards": "gpu_count", "nodes": "nodes"}


def find_scaling(scan: Scan) -> None:
    """Add ``_scale`` findings: (field, factor, as written)."""
    for m in scan.finditer(_SCALE, limit=2):
        factor = _WORDS[m.group("word")] if m.group("word") else float(m.group("n"))
        head = re.split(r"[\s_\-]", m.group("what"))[0]
        field = "seq_len" if head.startswith("seq") else _FIELD[head]
        written = " ".join(scan.text[m.start():m.end()].split())
        scan.add("_scale", (field, factor, written), m.start(), m.end())


def apply_scaling(scales: list[Any], fields: dict[str, Any], prev: dict[str, Any], task: str,
                  notes: list[str], ignored: list[str]) -> None:
    """Scaled previous values into ``fields``, in place; without one, the ask is named as unused."""
    for scale in scales:
        field, factor, written = scale
        if field == "_batch":
            field = "batch" if task == "infer" else "micro_batch"
        old = prev.get(field)
        if field in fields or not isinstance(old, int):
            ignored.append(written)
            continue
        fields[field] = max(1, round(old * factor))
        notes.append(f"{factor:g} x {field.replace('_', ' ')} {old:,} = {fields[field]:,}")
