"""Memory someone sees in use ("~73GB used per GPU ... is it leaking?", "nvidia-smi shows 76
GB"): a reading to explain, not a GPU's size or a setting. The answer sets it beside what the
engine reserves (``asking/observed_memory.py``)."""

from __future__ import annotations

import re

from service.parser.scan import Scan

_AMOUNT = r"~?\s*(?P<{name}>\d+(?:\.\d+)?)\s*(?:gb|gib|g)\b"
_OBSERVED = re.compile(
    _AMOUNT.format(name="after") + r"(?:\s+(?:of\s+(?:vram|memory|gpu\s+memory)\s+)?"
    r"(?:used|in\s+use|allocated|reserved|taken|occupied))"
    r"|\b(?:using|uses|shows?|showing|eating|eats|takes|taking|sitting\s+at)\s+"
    + _AMOUNT.format(name="before"))
_CONTEXT = re.compile(r"\bleak\w*|nvidia[\s\-]?smi|\bused\b|\bin\s+use\b|\bfreaking|\bwhy\b"
                      r"|\bnormal\b|\bexpected\b")


def find_observed_usage(scan: Scan) -> None:
    if not _CONTEXT.search(scan.low):
        return
    for m in scan.finditer(_OBSERVED, limit=1):
        value = float(m.group("after") or m.group("before"))
        scan.add("_observed_gb", value, m.start(), m.end())
