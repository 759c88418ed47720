"""Hardware fitcheck does not size: Apple silicon, CPU-only machines, TPUs and other accelerators.

Such a question gets an honest "not covered" sentence (``Parsed.problem``, intent ``invalid``,
the fields understood kept) instead of an answer for a GPU that was never named. Only when no GPU
is named: "I prototype on my MacBook, what about 8 h100s?" is a GPU question.
"""

from __future__ import annotations

import re

from service.parser.normalize import safe_echo
from service.parser.scan import Scan

_APPLE = re.compile(
    r"\b(?:mac(?:book)?(?:\s*(?:pro|air|studio|mini))?(?:\s+m[1-5](?:\s*(?:pro|max|ultra))?)?|imac"
    r"|apple(?:\s+silicon)?(?:\s+m[1-5](?:\s*(?:pro|max|ultra))?)?|m[1-5]\s*(?:pro|max|ultra)|mlx|mps"
    r"|m[1-5](?=\s*(?:with\s+)?\d{2,3}\s*gb))\b(?:\s*(?:with\s+)?\d{1,3}\s*gb\b)?")
_CPU = re.compile(
    r"\bcpu[\s\-]*only\b|\b(?:on|using|with)\s+(?:a\s+|the\s+|my\s+|just\s+)?cpus?\b(?![\s\-]*offload)"
    r"|\bcpu\s+(?:inference|serving|training)\b|\bno\s+gpus?\b|\bwithout\s+(?:a\s+|any\s+)?gpus?\b"
    r"|\b\d{1,4}\s*(?:gb|tb)\s+(?:of\s+)?(?:system\s+|cpu\s+|ddr\d\s+)?ram\b|\b(?:xeon|epyc|threadripper|ryzen)\b")
_OTHER = re.compile(r"\btpu(?:\s*v?\d\w*)?\b|\bgaudi\s*\d?\b|\btrainium\d?\b|\binferentia\d?\b|\bcerebras\b"
                    r"|\bgroq\b")
COVERED = "fitcheck sizes jobs for NVIDIA and AMD GPUs (datacenter and consumer cards)"


def names_uncovered_hardware(text: str) -> bool:
    """Whether the text names Apple silicon, another accelerator or a CPU-only machine: its memory
    ("mac studio 192gb") is then not a GPU's."""
    return any(pattern.search(text) for pattern, _ in _KINDS)


def find_not_covered(scan: Scan) -> None:
    """Add a ``_not_covered`` finding (the sentence to say) when no GPU is named but Apple silicon,
    another accelerator or a CPU-only machine is, and claim what was read ("mac m2 64gb")."""
    if any(f.field in ("gpu", "_unknown") for f in scan.findings):
        return
    said = False
    for pattern, say in _KINDS:
        for m in scan.finditer(pattern):
            if not said:
                said = True
                scan.add("_not_covered", say(safe_echo(scan.text[m.start():m.end()])), m.start(), m.end())
            scan.claim(m.start(), m.end())


def _apple(name: str) -> str:
    return (f"Apple silicon ({name or 'a Mac'}) isn't covered: {COVERED}, and a Mac's unified memory and "
            "Metal kernels behave differently, so any number I gave would be a guess.")


def _other(name: str) -> str:
    return f"{name.upper() or 'That accelerator'} isn't covered: {COVERED}."


def _cpu(name: str) -> str:
    return f"CPU-only machines aren't covered: {COVERED}; system RAM and CPU kernels aren't modelled."


_KINDS = ((_APPLE, _apple), (_OTHER, _other), (_CPU, _cpu))
