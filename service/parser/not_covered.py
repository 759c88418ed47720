"""Hardware fitcheck does not size: Apple silicon, CPU-only machines, TPUs and other accelerators.

Such a question gets an honest "not covered" sentence (``Parsed.problem``, intent ``invalid``)
instead of an answer for a GPU that was never named. Only when no GPU is named: "I prototype on my
MacBook, what about 8 h100s?" is a GPU question.
"""

from __future__ import annotations

import re

from service.parser.normalize import safe_echo

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


def not_covered(low: str, text: str) -> str | None:
    """The "not covered" sentence for the hardware named in ``low`` (lowercased ``text``), or None."""
    apple = _APPLE.search(low)
    if apple is not None:
        name = safe_echo(text[apple.start():apple.end()]) or "Apple silicon"
        return (f"Apple silicon ({name}) isn't covered: {COVERED}, and a Mac's unified memory and "
                "Metal kernels behave differently, so any number I gave would be a guess.")
    other = _OTHER.search(low)
    if other is not None:
        name = safe_echo(text[other.start():other.end()]).upper() or "That accelerator"
        return f"{name} isn't covered: {COVERED}."
    if _CPU.search(low) is not None:
        return f"CPU-only machines aren't covered: {COVERED}; system RAM and CPU kernels aren't modelled."
    return None
