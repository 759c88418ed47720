"""Step 3: bind each number to the attribute its neighbouring words name, by type, never by order.

The tokens become items: words that form a phrase of the vocabulary become one ``cue`` ("max
model len", ``--max-num-seqs``, "tokens of context"). From each number we look left and right,
past glue, binders (``= :``), filler words ("of", "up to") and adjectives ("concurrent",
"active"), for the nearest cue; a separator, another number, a name already read or any other word
ends the search. Each (number, cue) pair that the cue's attribute accepts gets a score: the side
people write that attribute's number on, an ``=``/``:`` between them, fewer words between, a value
in the attribute's plausible range, a suffix that fits it (32k for a context). Pairs are taken
best first; a number and a cue are each used once ("32k ctx 8 users": 8 is too short for a
context, so "ctx" takes 32k and "users" takes 8), except comparison lists ("4k or 8k context") and
phrases with two readings ("4 nodes of 8": the nodes before, the GPUs per node after).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from service.parser.amounts import amount
from service.parser.attributes import ADJECTIVES, ATTRIBUTES, FILLERS, STOPS
from service.parser.tokens import Token
from service.parser.vocabulary import Cue, longest_phrase, phrase_heads, phrases

MAX_GAP = 2  # filler words between a number and its cue
LIKELY = 8.0  # a pair scoring less is possible but no real alternative to another
_JOINS = frozenset({"or", "vs", "versus"})
Candidate = tuple[float, int, int, int, str]  # score, -distance, number index, cue index, attribute
# (side the number is on, side the cue's number is usually on) -> bonus; "users 12" is possible
# in a terse list but "8 users" is how it is said
_SIDE_BONUS = {("B", "B"): 3.0, ("B", "E"): 1.5, ("B", "A"): -3.0, ("A", "A"): 3.0, ("A", "E"): 1.5,
               ("A", "B"): -4.0}


@dataclass(frozen=True, slots=True)
class Item:
    """A token, or a run of word tokens that form one cue."""

    kind: str  # num, cue, word, sep, glue, bind, ent, join, fill
    start: int
    end: int
    text: str
    token: Token | None = None
    cue: Cue | None = None


@dataclass(frozen=True, slots=True)
class Bound:
    """A number and the attribute it was bound to (``cue`` is the cue item, or None)."""

    attribute: str
    index: int  # the number's item index
    number: Token
    cue: Item | None
    score: float = 0.0


def items(tokens: list[Token]) -> list[Item]:
    """Tokens with the vocabulary's phrases merged into cue items (longest phrase first)."""
    table, longest, heads = phrases(), longest_phrase(), phrase_heads()
    out: list[Item] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.kind != "word" or tok.text not in heads:
            kind = tok.kind
            if kind == "word":
                kind = "join" if tok.text in _JOINS else "fill" if tok.text in FILLERS else "word"
            out.append(Item(kind, tok.start, tok.end, tok.text, tok if kind == "num" else None))
            i += 1
            continue
        words: list[str] = []
        ends: list[int] = []
        j = i
        while j < len(tokens) and len(words) < longest:
            if tokens[j].kind == "word":
                words.append(tokens[j].text)
                ends.append(j)
            elif tokens[j].kind != "glue":
                break
            j += 1
        for n in range(len(words), 0, -1):
            cue = table.get(tuple(words[:n]))
            if cue is not None:
                last = tokens[ends[n - 1]]
                out.append(Item("cue", tok.start, last.end, " ".join(words[:n]), cue=cue))
                i = ends[n - 1] + 1
                break
        else:
            kind = "join" if tok.text in _JOINS else "fill" if tok.text in FILLERS else "word"
            out.append(Item(kind, tok.start, tok.end, tok.text))
            i += 1
    return out


def _walk(seq: list[Item], i: int, step: int) -> tuple[int, int, bool, bool] | None:
    """The nearest cue from number ``i`` in direction ``step``: (index, fillers, binder seen,
    loose). Going right, one word we don't know may sit between a number and its noun ("200
    internal users"): ``loose``, only a noun cue accepts that."""
    gap, binder, loose, j = 0, False, False, i + step
    while 0 <= j < len(seq):
        item = seq[j]
        if item.kind == "cue":
            return j, gap, binder, loose
        if item.kind == "bind" or item.kind == "glue":
            binder = binder or "=" in item.text or ":" in item.text
        elif item.kind == "fill" or (item.kind == "word" and item.text in ADJECTIVES):
            gap += 1
        elif item.kind == "word" and step > 0 and not loose and item.text not in STOPS:
            gap, loose = gap + 1, True
        else:
            return None
        if gap > MAX_GAP:
            return None
        j += step
    return None


def _score(number: Token, attribute: str, pref: str, side: str, gap: int, binder: bool) -> float | None:
    spec = ATTRIBUTES[attribute]
    unit = "word" if number.spelled else number.unit
    if unit not in spec.units:
        return None
    value, _ = amount(number, attribute)
    plausible = spec.low <= value <= spec.high
    if side == "A" and pref == "B" and not binder and (gap or not plausible):
        return None  # "users 12" in a terse list, but not "sequences of 4k" or "GPU 0 has"
    score = 10.0 + _SIDE_BONUS.get((side, pref), 0.0) + (3.0 if binder and side == "A" else 0.0)
    score -= 1.5 * gap
    if not plausible:
        score -= 6.0
    elif spec.usual is not None:
        score += 1.0 if spec.usual[0] <= value <= spec.usual[1] else -1.0
    if attribute == "seq_len":
        score += 2.0 if number.unit in ("k", "m") else -4.0 if value < 128 else 0.0
    if number.spelled:
        score -= 1.0
    return score


def bind(seq: list[Item]) -> list[Bound]:
    """The numbers of ``seq`` bound to attributes (see the module docstring)."""
    candidates: list[Candidate] = []
    for i, item in enumerate(seq):
        if item.kind != "num" or item.token is None:
            continue
        for step, side in ((1, "B"), (-1, "A")):
            found = _walk(seq, i, step)
            if found is None:
                continue
            j, gap, binder, loose = found
            cue = seq[j].cue
            assert cue is not None
            glued = seq[j].end == item.start or item.end == seq[j].start  # "tp8", "32k-token"
            for attribute, pref in cue.readings:
                if loose and pref != "B":
                    continue
                score = _score(item.token, attribute, pref, side, gap, binder)
                if score is not None:
                    candidates.append((score + (2.0 if glued else 0.0), -abs(j - i), i, j, attribute))
    candidates = _prefer_only_choices(candidates)
    # best score first; on a tie, the nearer cue, then "key value" before "value noun"
    # ("micro batch 4 sequences of 16384 tokens": 4 is the micro-batch)
    candidates.sort(key=lambda c: (-c[0], -c[1], c[3] > c[2], c[2]))
    used_numbers: set[int] = set()
    used_cues: set[tuple[int, str]] = set()  # a cue with two readings takes one number for each
    out: list[Bound] = []
    for score, _, i, j, attribute in candidates:
        if i in used_numbers or (j, attribute) in used_cues:
            continue
        used_numbers.add(i)
        used_cues.add((j, attribute))
        token = seq[i].token
        assert token is not None
        out.append(Bound(attribute, i, token, seq[j], score))
        out.extend(_listed(seq, i, j, attribute, used_numbers))
    return sorted(out, key=lambda b: b.index)


def _prefer_only_choices(candidates: list[Candidate]) -> list[Candidate]:
    """A number with a single cue in reach, or a cue with a single number, gets a point: in
    "seq 2048 micro batch 8" the 8 can only be the micro-batch, so 2048 is the sequence."""
    likely = [c for c in candidates if c[0] >= LIKELY]  # "1 seq len 16384": 1 is no choice for seq len
    numbers = Counter(c[2] for c in likely)
    cues = Counter(c[3] for c in likely)
    return [(c[0] + (numbers[c[2]] == 1) + (cues[c[3]] == 1), *c[1:]) for c in candidates]


def _listed(seq: list[Item], i: int, j: int, attribute: str, used: set[int]) -> list[Bound]:
    """Numbers joined to a bound one by "or"/"vs", away from its cue ("4k or 8k context")."""
    out: list[Bound] = []
    step = 1 if i > j else -1
    first = seq[i].token
    k = i + step
    while 0 <= k + step < len(seq) and seq[k].kind == "join" and seq[k + step].kind == "num":
        token = seq[k + step].token
        if token is None or first is None or token.unit != first.unit or k + step in used:
            break
        used.add(k + step)
        out.append(Bound(attribute, k + step, token, seq[j]))
        k += 2 * step
    return out
