"""The answer's JSON text, as the shared cache keeps it and the workers send it: the same answer
as the typed one, the permalink put in without parsing it again, and cached texts that no other
version of the engine (code or data, in any of its packages) ever reads."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from service import fingerprint
from service.answer_json import answer_bytes, answer_dict, answer_text, text_with_link
from service.answers import compute_answer
from service.core.job.request import EstimateRequest

QUOTED = 'https://fitcheck.example/v1/estimate?model=llama-3-8b&note="ü"'


@pytest.mark.parametrize("request_", [
    EstimateRequest(model="llama-3-8b", gpu="h100-80gb"),
    EstimateRequest(model="qwen2.5-72b", task="infer", concurrent=16, gpu="h100-80gb"),
    EstimateRequest(model="mistral-7b-v0.3", task="finetune", lora_rank=16),
])
def test_the_text_with_its_link_is_the_answer_with_its_link(request_: EstimateRequest) -> None:
    answer = compute_answer(request_).answer
    text = answer_text(answer)
    assert json.loads(text) == answer_dict(answer)
    assert json.loads(text_with_link(text, QUOTED)) == json.loads(
        answer_bytes(replace(answer, link=QUOTED)))


def test_only_link_less_answer_texts_take_a_link() -> None:
    answer = compute_answer(EstimateRequest(model="llama-3-8b")).answer
    with pytest.raises(ValueError):
        answer_text(replace(answer, link=QUOTED))
    with pytest.raises(ValueError):
        text_with_link(json.dumps(answer_dict(answer), indent=1), QUOTED)


def test_the_fingerprint_covers_every_engine_package(tmp_path: Path) -> None:
    """A change deep in the engine (``core/memory/...``) changes the cache keys' version."""
    copy = tmp_path / "service"
    shutil.copytree(fingerprint.ROOT / "core", copy / "core")
    shutil.copytree(fingerprint.ROOT / "data", copy / "data")
    for name in ("answers.py", "answer_json.py"):
        shutil.copy(fingerprint.ROOT / name, copy / name)
    before = fingerprint.fingerprint_of(copy)
    assert before == fingerprint.engine_fingerprint()
    deep = copy / "core" / "memory" / "formula.py"
    deep.write_text(deep.read_text() + "\n# a change\n")
    assert fingerprint.fingerprint_of(copy) != before
