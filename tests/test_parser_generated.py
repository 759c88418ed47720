"""Thousands of generated questions (``tests/parser_generator.py``): every slot rendered in the
surface forms people write, shuffled, with separators, filler and stray numbers. Each case's
fields are checked exactly; each slot must be right in at least 97% of the cases that state it,
no stray number may be bound to a field, and no case may fail to parse.
"""

from __future__ import annotations

from collections import Counter

from parser_generator import Case, check, generate

from service.parser import parse
from service.parser.parse import CRASH

CASES = 1500  # per seed: two seeds, two independent draws of forms, orders and filler
SEEDS = (14, 15)
SLOT_BAR = 0.97


def _results() -> tuple[Counter[str], Counter[str], list[str]]:
    right: Counter[str] = Counter()
    total: Counter[str] = Counter()
    wrong: list[str] = []
    for case in (c for seed in SEEDS for c in generate(CASES, seed)):
        parsed = parse(case.text)
        assert parsed.problem != CRASH, case.text
        for slot, ok in check(case, parsed).items():
            total[slot] += 1
            right[slot] += ok
            if not ok:
                wrong.append(f"{slot}: {case.text!r} -> {parsed.merged}")
    return right, total, wrong


def test_every_slot_is_read_right() -> None:
    right, total, wrong = _results()
    rates = {slot: right[slot] / total[slot] for slot in total}
    low = {slot: round(rate, 4) for slot, rate in rates.items() if rate < SLOT_BAR}
    assert not low, (low, wrong[:10])
    assert sum(right.values()) / sum(total.values()) >= 0.98, wrong[:10]


def test_cases_are_varied() -> None:
    cases: list[Case] = generate(CASES)
    assert len({c.text for c in cases}) > 0.99 * CASES
    slots = Counter(slot for c in cases for slot in c.expected)
    assert all(slots[s] >= 100 for s in ("model", "context", "concurrency", "batch", "gpu", "parallelism",
                                         "precision", "quantization", "kv_cache", "lora_rank"))
    assert sum(1 for c in cases if c.stray) >= 100
