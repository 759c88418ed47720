"""Training data given as examples and their length: "1M samples of 512 tokens", "200k
conversations of ~2k tokens", "50,000 docs x 4096 tokens each", "50k samples averaging 800
tokens" (a mean length: the product is still the data's tokens). The tokens are the product (for
time and cost) and the length is the sequence length where none is said; both said back.
"""

from __future__ import annotations

import re
from typing import Any

from service.parser.numbers import to_float
from service.parser.scan import Scan
from service.parser.token_counts import written_as
from service.parser.types import Finding

MIN_EXAMPLES = 1000
_SCALE = {"k": 1e3, "thousand": 1e3, "m": 1e6, "million": 1e6, "b": 1e9, "billion": 1e9}
_COUNT = (r"(?<![\w.$])~?(?P<n>\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)\s?"
          r"(?P<scale>k|m|b|thousand|million|billion)?\s+")
# the kinds of training example people count ("5k customer support chats": up to two words of
# what they are about before the kind); "sequences" only with a length ("200 sequences" alone
# are a batch or users)
_ABOUT = (r"(?:(?!tokens?\b|toks?\b|of\b|in\b|concurrent|simultaneous|parallel|active|live"
          r"|open\b|daily\b)[a-z\-]+\s+){0,2}?(?:training\s+|train\s+)?")
_KINDS = ("samples|examples|documents|docs|rows|conversations|convos|chats|dialogues|instructions"
          "|pairs|transcripts|tickets")
_KIND = _ABOUT + rf"(?:sequences|seqs|{_KINDS})"
_DATASET = re.compile(
    _COUNT + _KIND + r"\s*,?\s*\(?\s*(?:of|at|with|x|\*|averaging|avg\.?|average(?:\s+of)?|"
    r"on\s+average|each|(?:which|that)\s+averages?)\s+(?:~|about|around|up\s+to|roughly)?\s*"
    r"(?P<len>\d+(?:\.\d+)?)\s?(?P<k>k)?\s*(?:tokens?|toks?)(?:\s+each)?\b")
# a count of examples with no length ("3 epochs on 20k samples"): the thread's or the stated
# sequence length sizes each one (``examples_as_tokens``), and the number is no length itself
_EXAMPLES = re.compile(_COUNT + _ABOUT + rf"(?:{_KINDS})\b"
                       r"(?!\s*(?:/|per\s|a\s+(?:day|week|month)|an\s+hour|daily|at\s+once))")


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
        written = " ".join(scan.text[m.start():m.end()].replace("(", "").split())
        scan.add("tokens", tokens, m.start(), m.end(), f"{written} = {tokens:.3g} training tokens")
        # the examples' mean length is the sequence length unless one is said ("seq 1024")
        scan.add("_dataset_len", int(length), m.start(), m.end(), claim=False)
    for m in scan.finditer(_EXAMPLES, limit=1):
        if not scan.free(m.start(), m.end()):
            continue
        count = to_float(m.group("n"))
        if count is None:
            continue
        count *= _SCALE.get((m.group("scale") or "").lower(), 1.0)
        if count >= MIN_EXAMPLES:
            scan.add("_examples", count, m.start(), m.end())


def examples_as_tokens(scan: Scan, ordered: dict[str, list[Any]], thread_seq: object,
                       asks_time: bool, notes: list[str]) -> list[Finding]:
    """"3 epochs on 20k samples" after "seq 2048": the examples at the sequence length (at most:
    shorter examples are fewer tokens) are the training tokens, when epochs or the time are
    asked about and no tokens are said ("our dataset has 250k rows ... does it fit" asks no
    time: the count is then said back as not used)."""
    examples = ordered.pop("_examples", [None])[0]
    if not isinstance(examples, float):
        return []
    seq = (ordered.get("seq_len") or [thread_seq])[0]
    if ordered.get("tokens") or not isinstance(seq, int) \
            or not (asks_time or ordered.get("_epochs")):
        return written_as(scan, "_examples")
    ordered["tokens"] = [examples * seq]
    notes.append(f"{examples:,.0f} examples x {seq:,} tokens = {examples * seq:.3g} training "
                 "tokens (at most: shorter examples are fewer)")
    return []
