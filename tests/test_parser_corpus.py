"""The parser gets realistic chat questions right: every field listed in the corpus must match.

The corpus (``tests/data/parser_corpus.jsonl``, read by ``tests/parser_corpus.py``) holds questions
as ML engineers type them in Slack: training, fine-tuning, serving, time/cost, comparisons, pasted
launch configs, custom architectures, thread follow-ups with their ``previous``, help and bad input.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from ask_support import ask
from parser_corpus import check, load

from service.parser.types import INTENTS

CASES = load()
ANSWERED = ("train", "finetune", "infer", "time_cost", "compare")


def _id(case: dict[str, Any]) -> str:
    return f"{case['id']}-{case['intent']}"


def test_corpus_is_large_and_varied() -> None:
    intents = Counter(c["intent"] for c in CASES)
    assert len(CASES) >= 150
    assert set(intents) == set(INTENTS)
    assert sum(1 for c in CASES if c.get("previous")) >= 15  # thread follow-ups
    assert intents["invalid"] >= 15 and intents["compare"] >= 10
    assert len({c["text"] for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_fields(case: dict[str, Any]) -> None:
    result = check(case)
    assert all(result.values()), [k for k, ok in result.items() if not ok]


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_answer_and_reply(case: dict[str, Any]) -> None:
    answer = ask(case["text"], case.get("previous"))
    assert answer.intent == case["intent"]
    assert answer.reply.strip()
    if case["intent"] in ANSWERED and not case.get("clarify"):
        assert answer.answer is not None and answer.clarify is None, answer.reply
    if case.get("clarify"):
        assert answer.clarify and answer.clarify in answer.reply
    for unsafe in ("<!", "<@", "@channel", "@here", "<script", "<img"):
        assert unsafe not in answer.reply
    assert "<" not in answer.reply.replace("&lt;", "")
