"""Step 4: bound numbers become findings; numbers nothing claimed are read by their unit alone
where that is unambiguous, and the rest become ``_unread`` findings, as written, to be named in
the reply (``Parsed.ignored``). Digits inside a name ("gpt-4", ``load_in_8bit``), count words
("which one") and values a follow-up retires ("instead of 16") are not reported.

Read by unit alone (and said back): a power-of-two ``k`` length ("same but 128k") or a plain
power of two from 512 ("at 4096") is the context when none is stated; "4x" is the GPU count
when none is stated ("what about 4x?"); "3T" is training tokens.
"""

from __future__ import annotations

import re

from service.parser.amounts import amount, as_field
from service.parser.binding import Bound, Item, bind, items
from service.parser.custom_shape import add_architecture
from service.parser.numbers import is_power_of_two
from service.parser.scan import Scan
from service.parser.tokens import Token, tokenize

_WORDLIKE = ("word", "fill", "join", "cue")
MAX_UNREAD = 12  # the reply names a few; a long paste's hundredth stray number adds nothing
_ATTACHED = frozenset({"_", "-", ".", "/"})  # "gpt-4", "out_3": a name's digits, not a quantity
_PREPOSITIONS = frozenset({"on", "for", "with", "and", "to", "in", "at", "of", "per", "or", "from", "but"})
_UNSAFE = re.compile(r"[^\w .,\-/=:%$]")


def read_quantities(scan: Scan) -> None:
    """Add findings for every number the binder bound, and an ``_unread`` finding (the words as
    written) for each number nothing could read."""
    seq = items(tokenize(scan.marked()))
    bounds = bind(seq)
    bound_at = {b.index for b in bounds}
    arch: dict[str, int] = {}
    arch_span = [len(scan.text), 0]
    for b in bounds:
        value, note = amount(b.number, b.attribute)
        start, end = _span(b)
        attribute = _in_tokens(seq, b, _per_gpu(seq, b).split("~")[0])
        if attribute.startswith("arch."):
            arch[attribute[5:]] = int(value) if value == int(value) else 0
            arch_span = [min(arch_span[0], start), max(arch_span[1], end)]
        elif attribute.startswith("unsupported."):
            scan.add("_unread", _text(scan, start, end), start, end, claim=False)
        elif attribute in ("_epochs", "_output", "_batch_tokens", "_users", "_users_total", "_steps"):
            # used or named by ``token_counts`` and ``user_counts``
            scan.add(attribute, as_field(value), start, end, claim=False)
        elif not attribute.startswith("unused."):
            scan.add(attribute, as_field(value), start, end, note)
    if arch:
        vocab = arch.pop("vocab", None)
        add_architecture(scan, arch, vocab, arch_span[0], arch_span[1])
    present = {f.field for f in scan.findings}
    unread = 0
    for i, item in enumerate(seq):
        if item.kind != "num" or item.token is None or i in bound_at:
            continue
        if not _by_unit(scan, item.token, present):
            continue
        if not item.token.spelled and not _attached(seq, i) and not scan.stale(item.start):
            scan.add("_unread", _written(scan, seq, i), item.start, item.end, claim=False)
            unread += 1
            if unread >= MAX_UNREAD:
                break


def _span(b: Bound) -> tuple[int, int]:
    if b.cue is None:
        return b.number.start, b.number.end
    return min(b.number.start, b.cue.start), max(b.number.end, b.cue.end)


def _per_gpu(seq: list[Item], b: Bound) -> str:
    """"batch size 8 per gpu": a batch followed by "per gpu" is the micro-batch."""
    if b.attribute == "_per_gpu":
        return "micro_batch"
    if b.attribute != "_batch":
        return b.attribute
    j = b.index + 1
    while j < len(seq) and seq[j].kind in ("glue", "fill"):
        j += 1
    cue = seq[j].cue if j < len(seq) else None
    if cue is not None and any(a == "_per_gpu" for a, _ in cue.readings):
        return "micro_batch"
    return b.attribute


def _in_tokens(seq: list[Item], b: Bound, attribute: str) -> str:
    """"global batch 4M tokens": tokens right after a batch key are the batch, in tokens."""
    if attribute != "tokens":
        return attribute
    j = b.index - 1
    while j >= 0 and seq[j].kind in ("glue", "fill", "bind"):
        j -= 1
    cue = seq[j].cue if j >= 0 else None
    batch = cue is not None and any(a in ("_batch", "global_batch") for a, _ in cue.readings)
    return "_batch_tokens" if batch else attribute


def _by_unit(scan: Scan, token: Token, fields: set[str]) -> bool:
    """Read an unbound number by its unit when that is unambiguous (adding what it read to
    ``fields``); True if it stays unread."""
    value, unit = token.value, token.unit
    if unit == "x" and "gpu_count" not in fields and value >= 1:
        scan.add("gpu_count", int(value), token.start, token.end, f"{token.text} read as {int(value)} GPUs")
        fields.add("gpu_count")
        return False
    if "seq_len" not in fields and (
            (unit == "k" and is_power_of_two(value) and value <= 1024)
            or (unit == "" and is_power_of_two(value) and 512 <= value <= 1 << 20)):
        tokens, note = amount(token, "seq_len")
        scan.add("seq_len", int(tokens), token.start, token.end,
                 note or f"{int(tokens)} read as the context length")
        fields.add("seq_len")
        return False
    if unit == "t" and "tokens" not in fields:
        scan.add("tokens", value * 1e12, token.start, token.end, f"{token.text} read as training tokens")
        fields.add("tokens")
        return False
    return True


def _attached(seq: list[Item], i: int) -> bool:
    """A number glued to a word by ``_ - . /`` is part of a name ("gpt-4", "run_3", "load_in_8bit")."""
    for glue, word in ((i - 1, i - 2), (i + 1, i + 2)):
        if min(glue, word) >= 0 and max(glue, word) < len(seq) and seq[glue].kind == "glue" \
                and seq[glue].text in _ATTACHED and seq[word].kind in _WORDLIKE:
            left, right = sorted((seq[i], seq[glue], seq[word]), key=lambda x: x.start)[::2]
            if right.start - left.end == len(seq[glue].text):
                return True
    return False


def _written(scan: Scan, seq: list[Item], i: int) -> str:
    """An unread number as written, with the word after it ("5 engineers") or the key before it
    (``warmup=100``)."""
    start, end = seq[i].start, seq[i].end
    after = seq[i + 1] if i + 1 < len(seq) else None
    if after is not None and (after.kind == "cue"
                              or (after.kind == "word" and after.text not in _PREPOSITIONS)):
        end = after.end
    elif i >= 2 and seq[i - 1].kind == "bind" and seq[i - 2].kind in ("word", "cue"):
        start = seq[i - 2].start
    return _text(scan, start, end)


def _text(scan: Scan, start: int, end: int) -> str:
    """The user's words, reduced to characters that are safe to echo."""
    return " ".join(_UNSAFE.sub("", scan.text[start:end]).split())[:40]
