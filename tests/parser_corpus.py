"""The parser corpus (``tests/data/parser_corpus.jsonl``) and how one case is checked.

Each line: ``text``, optional ``previous`` (the thread's last parsed request), the expected
``intent``, ``fields`` (each must match ``parsed``; a dict value must be contained in the parsed
dict), optional ``absent`` (fields that must not be parsed), ``clarify`` (a question back is
expected, or not), ``compare`` (``field`` and the ``values`` of its variants, in order),
``ignored`` (numbers, as written, that the parser must say it did not use), ``problem`` (a "can't
answer that" sentence is expected, or not) and ``unknown`` (the name asked about, as written).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from service.parser import Parsed, parse

CORPUS = Path(__file__).parent / "data" / "parser_corpus.jsonl"


def load() -> list[dict[str, Any]]:
    return [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line]


def _same(expected: Any, actual: Any) -> bool:
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(_same(v, actual.get(k)) for k, v in expected.items())
    if isinstance(expected, bool) or isinstance(actual, bool):
        return expected is actual
    if isinstance(expected, int | float) and isinstance(actual, int | float):
        return math.isclose(expected, actual, rel_tol=1e-9)
    return bool(expected == actual)


def compared(parsed: Parsed) -> list[Any]:
    field = parsed.compare_field or ""
    out = []
    for v in parsed.compare:
        out.append(v.changes.get("model", v.changes.get("params_b")) if field == "model"
                   else v.changes.get(field))
    return out


def check(case: dict[str, Any]) -> dict[str, bool]:
    """Each checked item ('intent', each field, 'absent:x', 'clarify', 'compare') -> correct?"""
    parsed = parse(case["text"], case.get("previous"))
    out = {"intent": parsed.intent == case["intent"]}
    for key, value in case["fields"].items():
        out[key] = key in parsed.merged and _same(value, parsed.merged[key])
    for key in case.get("absent", []):
        out[f"absent:{key}"] = key not in parsed.merged
    if "clarify" in case:
        out["clarify"] = (parsed.clarify is not None) == case["clarify"]
    if "ignored" in case:
        said = " | ".join(parsed.ignored)
        out["ignored"] = all(w in said for w in case["ignored"]) and (bool(case["ignored"]) or not said)
    if "problem" in case:
        out["problem"] = (parsed.problem is not None) == case["problem"]
    if "unknown" in case:
        out["unknown"] = parsed.unknown is not None and parsed.unknown.name.lower() == case["unknown"].lower()
    if "compare" in case:
        want = case["compare"]
        out["compare"] = parsed.compare_field == want["field"] and \
            all(_same(a, b) for a, b in zip(want["values"], compared(parsed), strict=False)) and \
            len(want["values"]) == len(parsed.compare)
    return out
