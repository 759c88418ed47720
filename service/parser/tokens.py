"""Step 2 of the pipeline: the text left after names and switches were read, as tokens.

One left-to-right regex pass (linear in the text) gives numbers with their suffix (4k, 32K, 1.5T,
2e12, 80gb, 8x, x8, $2.5, 40%), words, separators (, ; | newline brackets), glue (``_ - /``
inside identifiers and flags), binders (``= :`` and quotes) and ``ent`` for each span an earlier
step claimed (a model, a GPU, a switch). ``tp4``/``r16``/``mbs2``/``seq4096``/``ctx8k`` split
into word and number; other words keep their digits ("a770", "v2" are not numbers). Count words ("one", "two",
"a single") are numbers too, marked ``spelled`` so they are never reported as ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from service.parser.numbers import to_float

CLAIMED = "\x00"  # what a claimed character becomes in the tokenized view
MAX_TOKENS = 4000  # a 10,000-character paste has fewer; beyond this the rest is not read

_PATTERN = (
    r"(?P<ent>\x00+)"
    r"|(?P<dotted>\d+(?:\.\d+){2,}|v\d+(?:\.\d+)+)"  # versions, addresses: not quantities
    r"|(?P<num>(?P<sign>(?:(?<=[\s=:(\[,\"'])|^)-(?=\d))?(?P<cur>\$\s?)?"
    r"(?P<digits>\d{1,3}(?:,\d{3})+(?![\dkmbt])|\d+(?:\.\d+)?|\.\d+)(?P<exp>e[+-]?\d{1,3})?"
    r"(?P<unit>(?:k|m|b|bn|t|x|gb|gib|g|tb|mb)(?![a-z0-9])|\s?(?:gb|gib|tb|gigs?|gigabytes?)(?![a-z0-9])|\s?%|\$"
    r"|\s?(?:thousand|million|billion|trillion|usd|dollars?|bucks)(?![a-z]))?)"
    r"|(?P<word>[a-z][a-z0-9]*(?:'[a-z]{1,2})?)"
    r"|(?P<sep>\n|[,;|()\[\]{}!?&+]|\.(?!\d)|(?<=\s)[\-/]+(?=\s)|//)"
    r"|(?P<glue>[_\-/.]+)"
    r"|(?P<bind>[=:~\"'`*@#<>\\]+)"
)
_TOKEN = re.compile(_PATTERN)
# Someone who writes "tp 4,micro batch 2,256 global batch" uses commas as separators, not as
# thousands separators: "2,256" is two numbers there.
_NO_GROUPS = re.compile(_PATTERN.replace(r"\d{1,3}(?:,\d{3})+(?![\dkmbt])|", ""))
_BARE_COMMA = re.compile(r",[a-z]")
_GLUED = re.compile(r"^(tp|pp|cp|ep|dp|r|bs|mbs|gbs|x|ga|seq|ctx)(\d{1,6})(k?)$")
SPELLED: dict[str, int] = {
    "one": 1, "single": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "twelve": 12, "sixteen": 16, "twenty": 20, "dozen": 12,
    "couple": 2, "pair": 2, "thirty": 30, "fifty": 50, "hundred": 100, "dual": 2, "quad": 4,
}
_UNITS = {"gib": "gb", "g": "gb", "gig": "gb", "gigs": "gb", "gigabyte": "gb", "gigabytes": "gb", "bn": "b",
          "thousand": "k", "million": "m", "billion": "b",
          "trillion": "t", "usd": "$", "dollar": "$", "dollars": "$", "bucks": "$"}


@dataclass(frozen=True, slots=True)
class Token:
    """One token: ``kind`` is num, word, sep, glue, bind or ent; offsets index the message."""

    kind: str
    text: str  # lowercased, as written
    start: int
    end: int
    value: float = 0.0  # numbers: the number as written, before its suffix
    unit: str = ""  # numbers: k, m, b, t, x, gb, tb, mb, %, $ (money) or ""
    spelled: bool = False  # "one", "a single": a count word, not digits


def _number(m: re.Match[str]) -> Token | None:
    digits = m.group("digits")
    value = to_float(digits + (m.group("exp") or ""))
    if value is None:
        return None
    if m.group("sign"):
        value = -value
    unit = (m.group("unit") or "").strip().lower()
    unit = _UNITS.get(unit, unit)
    if m.group("cur"):
        unit = "$"
    return Token("num", m.group(0).strip(), m.start(), m.end(), value, unit)


def _word(m: re.Match[str]) -> list[Token]:
    text = m.group("word")
    glued = _GLUED.match(text)
    if glued is None:
        if text in SPELLED:
            return [Token("num", text, m.start(), m.end(), float(SPELLED[text]), spelled=True)]
        return [Token("word", text, m.start(), m.end())]
    head, digits, unit = glued.groups()
    if unit and head not in ("seq", "ctx"):  # "seq8k", "ctx32k": token counts; "bs8k" is not
        return [Token("word", text, m.start(), m.end())]
    split = m.start() + len(head)
    if head == "x":  # "x8": a count written after its thing ("h100 x8")
        return [Token("num", text, m.start(), m.end(), float(digits), "x")]
    return [Token("word", head, m.start(), split),
            Token("num", digits + unit, split, m.end(), float(digits), unit)]


def tokenize(view: str) -> list[Token]:
    """Tokens of ``view`` (the lowercased message with claimed spans as ``CLAIMED``)."""
    out: list[Token] = []
    pattern = _NO_GROUPS if _BARE_COMMA.search(view) else _TOKEN
    for m in pattern.finditer(view):
        kind = m.lastgroup or ""  # the outer group closes last, so this is the token's kind
        if kind == "num":
            token = _number(m)
            if token is not None:
                out.append(token)
        elif kind == "word":
            out.extend(_word(m))
        elif kind == "dotted":
            out.append(Token("word", m.group(0), m.start(), m.end()))
        else:
            out.append(Token(kind, m.group(0).strip() or m.group(0), m.start(), m.end()))
        if len(out) >= MAX_TOKENS:
            break
    return out
