"""Speed work changes no answer: every request of ``answer_digests.py`` answers byte for byte
what the fixture recorded. After a deliberate change to the figures or the advice, regenerate
the fixture: ``python3 tests/answer_digests.py``."""

from __future__ import annotations

import json

from tests.answer_digests import FIXTURE, digests

REGENERATE = "python3 tests/answer_digests.py"


def test_every_answer_is_unchanged() -> None:
    recorded: dict[str, str] = json.loads(FIXTURE.read_text())
    now = digests()
    assert set(now) == set(recorded), f"the set of requests changed: run {REGENERATE}"
    changed = sorted(key for key, digest in now.items() if recorded[key] != digest)
    assert not changed, (f"{len(changed)} of {len(now)} answers changed, e.g. {changed[:5]}; "
                         f"if on purpose, run {REGENERATE}")
