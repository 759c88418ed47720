"""Memory someone sees in use ("~73GB used per GPU ... is it leaking?", "nvidia-smi shows 76
GB"): a reading to explain, not a GPU's size or a setting. The answer sets it beside what the
engine reserves (``asking/leading_lines.py``)."""

from __future__ import annotations

import re

from service.parser.scan import Scan

_AMOUNT = r"~?\s*(?P<{name}>\d+(?:\.\d+)?)\s*(?:gb|gib|g)\b"
# an amount that names hardware or a size is not a reading: "using 40gb a100s", "24gb cards",
# "takes 140gb in bf16"
_NOT_A_READING = (r"(?!\s*(?:cards?|gpus?|devices?|[a-z]+\d{2,}|rtx|in\s+(?:bf16|fp16|fp8|int\d)"
                  r"|of\s+(?:weights|vram\s+cards?)))")
_OBSERVED = re.compile(
    _AMOUNT.format(name="after") + r"(?:\s+(?:of\s+(?:vram|memory|gpu\s+memory)\s+)?"
    r"(?:used|in\s+use|allocated|reserved|taken|occupied))"
    r"|\b(?:shows?|showing|eating|eats|sitting\s+at|uses|using|hitting|at)\s+"
    + _AMOUNT.format(name="before") + _NOT_A_READING
    + r"(?=[^.?!]{0,40}?(?:\bper\s+gpu|\bon\s+each|\beach\s+gpu|\bused\b|\bin\s+use\b"
    r"|nvidia[\s\-]?smi|\bleak|\bnormal\b|\bexpected\b|\?))")
_CONTEXT = re.compile(r"\bleak\w*|nvidia[\s\-]?smi|\bused\b|\bin\s+use\b|\bfreaking|\bwhy\b"
                      r"|\bnormal\b|\bexpected\b")


def find_observed_usage(scan: Scan) -> None:
    if not _CONTEXT.search(scan.low):
        return
    for m in scan.finditer(_OBSERVED, limit=1):
        value = float(m.group("after") or m.group("before"))
        scan.add("_observed_gb", value, m.start(), m.end())
