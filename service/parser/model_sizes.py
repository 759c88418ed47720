"""Bare model sizes: "7B", "a 30B model", "1.3b params", "125m", "-7b" (refused later, by name).

A size followed by tokens, rows, dollars or a rate is not a model ("300B tokens", "$7b"); in
millions it is not one next to a context or a count of users or sequences ("2m sequences",
"context 1M"); "8x7b" is a Mixtral name, not a 7B.
"""

from __future__ import annotations

import re

from service.parser.scan import Scan

_BARE = re.compile(
    r"(?<![\w.$])(?P<neg>-)?(?P<num>\d+(?:\.\d+)?)\s?(?P<unit>billion|bil|bn|b|million|mil|m|trillion|t)"
    r"(?![\w])(?P<tail>\s*(?:-?\s*param(?:eter)?s?|model|llm|dense|moe)\b)?"
)
_NOT_PARAMS = re.compile(
    r"[ \t]*(?:tokens?|toks?|rows|samples|examples|steps|images|words|docs|documents|dollars|usd"
    r"|/\s*(?:s|sec|h|hr|hour|day|mo|month)\b|per[ \t]+(?:s|sec|second|hour|day|step|month)\b|\$)"
)
# "2m sequences", "100k users": counts of other things; but "7B seq 4096" is a 7B model.
_NOT_PARAMS_MILLIONS = re.compile(r"\s*(?:context|ctx|users?|requests?|seq|sequences?)")
_LENGTH_BEFORE = re.compile(r"(?:context|ctx|seq\w*|window|len(?:gth)?)\s*(?:of|=|:|is|at)?\s*$")


def find_bare_sizes(scan: Scan) -> None:
    """Add ``params_b`` for each bare size that names a model (not tokens, users or a context)."""
    view = scan.view()
    for m in scan.finditer(_BARE):
        unit = m.group("unit")
        tail = view[m.end():m.end() + 20]
        millions = unit in ("m", "million")
        head = view[max(0, m.start() - 24):m.start()]
        if not m.group("tail") and (_NOT_PARAMS.match(tail) or (
                millions and (_NOT_PARAMS_MILLIONS.match(tail) or _LENGTH_BEFORE.search(head)))):
            continue  # "2m sequences", "context 1M"
        if unit in ("t", "trillion") and not m.group("tail"):
            continue  # "on 3T" is a token count
        if m.start() > 0 and view[m.start() - 1] == "x":
            continue  # "8x7b"
        value = float(m.group("num")) * {"b": 1.0, "bn": 1.0, "bil": 1.0, "billion": 1.0,
                                         "m": 1e-3, "mil": 1e-3, "million": 1e-3, "t": 1e3,
                                         "trillion": 1e3}[unit]
        if m.group("neg"):
            value = -value
        scan.add("params_b", round(value, 6), m.start(), m.end())
