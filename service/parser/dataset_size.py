"""Training data given as examples and their length: "1M samples of 512 tokens", "200k
conversations of ~2k tokens", "50,000 docs x 4096 tokens each", "50k samples averaging 800
tokens" (a mean length: the product is still the data's tokens). The tokens are the product (for
time and cost) and the length is the sequence length where none is said; both said back.
"""

from __future__ import annotations

import re

from service.parser.numbers import to_float
from service.parser.scan import Scan

MIN_EXAMPLES = 1000
_SCALE = {"k": 1e3, "thousand": 1e3, "m": 1e6, "million": 1e6, "b": 1e9, "billion": 1e9}
_DATASET = re.compile(
    r"(?<![\w.])(?P<n>\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)\s?(?P<scale>k|m|b|thousand|million|billion)?\s+"
    r"(?:training\s+|train\s+)?(?:samples|examples|sequences|seqs|documents|docs|rows|conversations|"
    r"dialogues|instructions|pairs)\s*,?\s+(?:of|at|with|x|\*|averaging|avg\.?|average(?:\s+of)?|"
    r"on\s+average|each|(?:which|that)\s+averages?)\s+(?:~|about|around|up\s+to|roughly)?\s*"
    r"(?P<len>\d+(?:\.\d+)?)\s?(?P<k>k)?\s*(?:tokens?|toks?)(?:\s+each)?\b")


def find_dataset_size(scan: Scan) -> None:
    """Add ``tokens`` (examples x length) and ``seq_len`` (the length) for each such phrase."""
    for m in scan.finditer(_DATASET, limit=1):
        count = to_float(m.group("n"))
        length = to_float(m.group("len"))
        if count is None or length is None:
            continue
        count *= _SCALE.get((m.group("scale") or "").lower(), 1.0)
        if count < MIN_EXAMPLES:  # "h200 x 4 sequences of 4096 tokens" is no dataset
            continue
        length *= 1024 if m.group("k") else 1
        tokens = count * length
        written = " ".join(scan.text[m.start():m.end()].split())
        scan.add("tokens", tokens, m.start(), m.end(), f"{written} = {tokens:.3g} training tokens")
        # the examples' mean length is the sequence length unless one is said ("seq 1024")
        scan.add("_dataset_len", int(length), m.start(), m.end(), claim=False)
