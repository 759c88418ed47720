"""The service's real answers to the questions the bot's tests post, captured as JSON
(``fixtures/bot_ask_answers.json``) so the bot's tests need no service. Regenerate after the
engine's figures change: ``python3 tests/bot_answers.py``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from service.app import create_app
from service.settings import Settings

FIXTURE = Path(__file__).parent / "fixtures" / "bot_ask_answers.json"
PUBLIC_URL = "https://fitcheck.example.com"
SEVEN_B = {"params_b": 7.0, "seq_len": 4096, "zero_stage": 3, "gpu": "a100-40gb",
           "task": "train"}
QUESTIONS: dict[str, tuple[str, dict[str, Any] | None]] = {
    "fits": ("7B, seq 4096, ZeRO-3, A100 40GB?", None),
    "does_not_fit": ("llama 3 70b on 2 a100 40gb with zero 3", None),
    "no_gpu": ("train llama 3 8b", None),
    "serving": ("serve llama-3.1-70b at 16k context for 50 users on h100s", None),
    "compare": ("zero-2 or zero-3 for llama 3 70b on 16 h100s?", None),
    "time_cost": ("days to pretrain a 30B on 3T tokens with 1024 H200s", None),
    "help": ("help", None),
    "clarify": ("train gpt-5 on h100", None),
    "invalid": ("asdf qwerty", None),
    "followup": ("what about seq 8192?", SEVEN_B),
}


def capture() -> dict[str, Any]:
    out: dict[str, Any] = {}
    with TestClient(create_app(Settings(public_url=PUBLIC_URL))) as api:
        for name, (question, previous) in QUESTIONS.items():
            response = api.post("/v1/ask", json={"text": question, "previous": previous})
            response.raise_for_status()
            out[name] = {"question": question, "previous": previous, "response": response.json()}
    return out


if __name__ == "__main__":
    FIXTURE.write_text(json.dumps(capture(), indent=1, ensure_ascii=False) + "\n")
