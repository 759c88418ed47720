"""Field-level accuracy of the chat parser over its corpus, and how long a question takes.

Run: python3 bench/parser_accuracy.py. Prints intent accuracy, accuracy per field and overall
(every field each corpus question lists, plus expected absences, questions back and comparisons),
the questions with a wrong item, and timing: ``parse`` per question (mean, p50, p99 in us), the
whole ``ask`` with the engine (mean, p99 in ms), and the slowest parse of adversarial 10,000-char
texts.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ask_support import ask
from parser_corpus import check, load

from service.parser import parse

ADVERSARIAL = ("1" * 10_000, "a" * 10_000, "llama 3 8b " * 909, "8x h100 " * 1250,
               "4 nodes of 8xH100 " * 555, "48 layers, d_model 6144, " * 400, "<@U1> " * 1666,
               "zero-3 or zero-2 vs " * 500, "{" * 5000 + "}" * 5000, "1.5T tokens " * 833)


def _timed(fn: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def accuracy() -> None:
    cases = load()
    right: dict[str, int] = defaultdict(int)
    total: dict[str, int] = defaultdict(int)
    wrong: list[str] = []
    for case in cases:
        result = check(case)
        for item, ok in result.items():
            key = "absent" if item.startswith("absent:") else item
            total[key] += 1
            right[key] += ok
        if not all(result.values()):
            wrong.append(f"  #{case['id']} {case['text'][:70]!r}: "
                         + ", ".join(k for k, ok in result.items() if not ok))
    items, good = sum(total.values()), sum(right.values())
    fields = items - total["intent"]
    print(f"corpus: {len(cases)} questions, {items} checked items")
    print(f"intent accuracy: {right['intent'] / total['intent']:.1%} "
          f"({right['intent']}/{total['intent']})")
    print(f"field-level accuracy: {(good - right['intent']) / fields:.1%} "
          f"({good - right['intent']}/{fields})")
    print(f"overall (intent + fields): {good / items:.1%}\n")
    print(f"{'item':<22}{'right':>7}{'total':>7}{'accuracy':>10}")
    for key in sorted(total, key=lambda k: (-total[k], k)):
        print(f"{key:<22}{right[key]:>7}{total[key]:>7}{right[key] / total[key]:>10.1%}")
    print("\nwrong:" if wrong else "\nwrong: none")
    for line in wrong:
        print(line)


def timing() -> None:
    cases = load()
    for case in cases:  # warm caches (presets, catalog, regexes)
        ask(case["text"], case.get("previous"))
    parse_us = [_timed(lambda c=c: parse(c["text"], c.get("previous")), 5) * 1e6 for c in cases]
    ask_ms = [_timed(lambda c=c: ask(c["text"], c.get("previous")), 1) * 1e3 for c in cases]
    print(f"\nparse per question: mean {statistics.mean(parse_us):,.0f} us, "
          f"p50 {_pct(parse_us, 0.5):,.0f} us, p99 {_pct(parse_us, 0.99):,.0f} us")
    print(f"ask per question (parse + engine + planner + reply): mean "
          f"{statistics.mean(ask_ms):,.1f} ms, p99 {_pct(ask_ms, 0.99):,.1f} ms")
    worst = max(_timed(lambda t=t: parse(t[:10_000]), 3) for t in ADVERSARIAL)
    print(f"slowest parse of {len(ADVERSARIAL)} adversarial 10,000-char texts: {worst * 1e3:,.1f} ms")


if __name__ == "__main__":
    accuracy()
    timing()
