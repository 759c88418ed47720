"""A pasted CUDA out-of-memory message names the card's memory: "(GPU 0; 23.65 GiB total
capacity; ...)" is a 24 GB card. The total a process sees is a little under what the card is
sold as (``memory_bytes_usable`` in the catalog), so it reads as the next size cards are sold in,
then as any "24 GB GPU" does."""

from __future__ import annotations

import re

# PyTorch's OutOfMemoryError: "GPU 0 has a total capacity of 79.19 GiB" (2.1+) or "(GPU 0;
# 23.65 GiB total capacity; ...)" (older)
_CAPACITY = re.compile(r"(?:total\s+capacity\s+of\s+(\d{1,3}(?:\.\d+)?)\s*gib"
                       r"|(\d{1,3}(?:\.\d+)?)\s*gib\s+total\s+capacity)", re.I)
# the message's other figures say what was free at that moment, not the job: dropped
_NOISE = re.compile(r"tried\s+to\s+allocate\s+\d+(?:\.\d+)?\s*[gmk]i?b|\(?\bgpu\s+\d+\s*(?:;|has\b)"
                    r"|(?:of\s+which\s+)?\d+(?:\.\d+)?\s*[gmk]i?b\s+(?:is\s+)?(?:free|already\s+allocated|"
                    r"allocated|reserved|in\s+use)(?:\s+in\s+total)?(?:\s+by\s+pytorch)?"
                    r"|process\s+\d+\s+has\s+\d+(?:\.\d+)?\s*[gmk]i?b\s+memory\s+in\s+use", re.I)
SOLD_GB = (8, 10, 11, 12, 16, 20, 24, 32, 40, 48, 64, 80, 94, 96, 141, 180, 192, 256, 288)


def capacity_as_memory(text: str) -> str:
    """The capacity of an OOM message as the card's memory ("a 24gb gpu")."""
    def sold(m: re.Match[str]) -> str:
        seen = float(m.group(1) or m.group(2))
        size = next((gb for gb in SOLD_GB if gb >= seen), None)
        return m.group(0) if size is None else f"a {size}gb gpu"

    if _CAPACITY.search(text) is None:
        return text
    return _CAPACITY.sub(sold, _NOISE.sub(" ", text))
