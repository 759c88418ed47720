"""Serving features fitcheck does not model, named back to the user ("I did not use: ...")
rather than dropped: prefix caching (said with what it changes) and a shared system prompt
(the KV cache is counted per sequence in full), speculative decoding (a draft model or EAGLE/MTP
heads add weights and KV), and throughput or latency (fitcheck sizes memory and GPU counts, not
speed).

Each claims what it read, so a shared prompt's length is not taken for the context.
"""

from __future__ import annotations

import re

from service.parser.scan import Scan

# prefix caching: said, with what it changes (vLLM V1 and SGLang run it by default)
_PREFIX = re.compile(r"\b(?:automatic\s+)?prefix[\s\-_]*cach\w*|--enable-prefix-caching\b"
                     r"|\bradix[\s\-_]*cache\b")
PREFIX_NOTE = ("prefix caching is on by default in vLLM V1 and SGLang: requests that share a "
               "prefix share its KV blocks, so more of them fit than sized here, where every "
               "sequence's KV cache is counted in full")
_UNMODELLED = re.compile(
    r"\b(?:shared|common|same)\s+(?:\d[\d,.]*\s*k?\s*(?:-?\s*tokens?\s+)?)?(?:system\s+)?prompts?\b"
    r"|\bspec(?:ulative)?[\s\-_]*decod\w*|\beagle[\s\-]?[23]?\b|\bmedusa\b|\bdraft[\s\-_]*models?\b")
# serving speed; a training run's speed is its time estimate
_SERVING_SPEED = re.compile(
    r"\b(?:tokens?|toks?)\s*/\s*s(?:ec)?\b|\btokens?\s+(?:per|a)\s+second\b"
    r"|\brequests?\s*/\s*s(?:ec)?\b|\brequests?\s+per\s+second\b|\bthroughput\b|\blatency\b"
    r"|\b\d+(?:\.\d+)?\s*(?:rps|qps)\b|\b(?:rps|qps)\b"
    r"|\bttft\b|\btpot\b")
_TRAINING = re.compile(r"\b(?:train\w*|pre[\s\-]?train\w*|fine[\s\-]?tun\w*|finetun\w*|epochs?)\b")


def find_unmodelled(scan: Scan) -> None:
    for m in scan.finditer(_PREFIX, limit=1):
        scan.add("_prefix_caching", True, m.start(), m.end(), PREFIX_NOTE)
    training = _TRAINING.search(scan.low)
    for m in scan.finditer(_UNMODELLED):
        scan.add("_unread", " ".join(scan.text[m.start():m.end()].split()), m.start(), m.end())
    for m in [] if training else scan.finditer(_SERVING_SPEED):
        written = " ".join(scan.text[m.start():m.end()].split())
        scan.add("_unread", written, m.start(), m.end())
        scan.add("_speed", written, claim=False)  # the answer says it sizes memory, not speed
