"""DeepSeek-R1's names as people write them: "r1" alone (the 671B model, unless it is a LoRA
rank), and the R1-Distill models, which keep their base model's architecture."""

from __future__ import annotations

import re

from service.core.model.presets import lookup_preset
from service.parser.scan import Scan
from service.parser.types import Unknown

# DeepSeek-R1 is mostly written bare ("serve r1 on 8x h200"); "r1" after a LoRA word is a rank
_R1 = re.compile(r"(?<![\w.\-=])r1(?:[\s\-_]*0528)?(?:[\s\-_]*671b)?(?![\w.=])")
_LORA_BEFORE = re.compile(r"(?:q?lora|rank|adapters?)\W{0,3}$")
R1_PRESET = "deepseek-r1"


def read_bare_r1(scan: Scan) -> None:
    for m in scan.finditer(_R1, limit=1):
        if scan.free(m.start(), m.end()) and not _LORA_BEFORE.search(
                scan.low[max(0, m.start() - 10):m.start()]):
            preset = lookup_preset(R1_PRESET)
            if preset is not None:
                scan.add("model", preset.id, m.start(), m.end(), "read 'r1' as DeepSeek-R1")


_DISTILL = re.compile(r"\b(?:deepseek[\s\-_]*)?r1[\s\-_]*distill(?:ed)?(?:[\s\-_]*(?P<fam>qwen|llama)"
                      r"(?:[\s\-_]*(?P<size>\d+(?:\.\d+)?)\s?b)?"
                      # the size alone names one distill: "r1 distill 32b" is the Qwen one
                      r"|[\s\-_]*(?P<bare>\d+(?:\.\d+)?)\s?b)?\b")
# the distills fitcheck has as presets (their own repos for the launch configs); the 1.5B and
# 7B (on Qwen2.5-Math) are read as their bases' shapes
_DISTILL_BASE = {("qwen", "1.5b"): "qwen2.5-1.5b", ("qwen", "7b"): "qwen2.5-7b",
                 ("qwen", "14b"): "deepseek-r1-distill-qwen-14b",
                 ("qwen", "32b"): "deepseek-r1-distill-qwen-32b",
                 ("llama", "8b"): "deepseek-r1-distill-llama-8b",
                 ("llama", "70b"): "deepseek-r1-distill-llama-70b"}


def read_distills(scan: Scan) -> None:
    """DeepSeek-R1-Distill-<base>-<size> keeps its base model's architecture."""
    for m in scan.finditer(_DISTILL):
        fam = m.group("fam") or next((f for f, size in _DISTILL_BASE if size == f"{m.group('bare')}b"), "")
        base = _DISTILL_BASE.get((fam, (m.group("size") or m.group("bare") or "") + "b"))
        if base is not None:
            note = "" if base.startswith("deepseek-r1-distill") else \
                f"R1-Distill-{fam.title()}-{m.group('size') or m.group('bare')}B has {base}'s architecture"
            scan.add("model", base, m.start(), m.end(), note)
        else:
            scan.add("_unknown", Unknown("model", "deepseek r1 distill", tuple(_DISTILL_BASE.values())[1:4]),
                     m.start(), m.end())
