"""Unit checks of the parser's pieces: units, Slack markup, replies, answers, the CLI."""

from __future__ import annotations

import json

import pytest
from ask_support import ask

from service.asking.ask_types import AskAnswer
from service.cli import main
from service.parser import parse
from service.parser.amounts import amount
from service.parser.normalize import clean
from service.parser.tokens import tokenize
from service.render.slack_reply import safe


@pytest.mark.parametrize(("num", "unit", "tokens"), [
    ("4", "k", 4096), ("32", "K", 32768), ("128", "k", 131072), ("100", "k", 100_000),
    ("1.5", "k", 1500), ("1", "M", 1_048_576), ("2048", None, 2048),
])
def test_context_lengths(num: str, unit: str | None, tokens: int) -> None:
    (token,) = tokenize(f"{num}{unit or ''}".lower())
    assert amount(token, "seq_len")[0] == tokens


def test_slack_markup_is_removed() -> None:
    text = clean("<!channel> <@U123> &gt; :fire: see <https://huggingface.co/Qwen/Qwen2.5-7B|this> "
                 "`zero-3` &amp; <http://x.example|the docs>").text
    for gone in ("<", ">", "@", ":fire:", "`", "channel", "U123", "&amp;"):
        assert gone not in text
    assert "Qwen/Qwen2.5-7B" in text and "the docs" in text and "&" in text


def test_reply_is_mrkdwn_safe() -> None:
    assert safe("a < b & c > d ~5 <!here> @channel") == "a &lt; b &amp; c &gt; d ≈5  "


def test_answer_is_frozen_and_complete() -> None:
    answer = ask("7B, seq 4096, ZeRO-3, A100 40GB?")
    assert isinstance(answer, AskAnswer)
    with pytest.raises(AttributeError):
        answer.intent = "x"  # type: ignore[misc]
    assert answer.answer is not None and (answer.answer.min_gpus or 0) >= 1
    assert answer.answer.per_gpu_bytes.total > 0
    for said in ("GB", "_Assumed:_", "bf16 mixed", "AdamW", "FlashAttention on", "micro-batch"):
        assert said in answer.reply
    assert answer.reply.startswith("*")  # verdict first


def test_time_cost_and_compare_answers() -> None:
    time = ask("days to pretrain a 30B on 3T tokens with 1024 H200s")
    assert time.intent == "time_cost" and time.answer is not None
    assert time.answer.compute is not None
    assert time.answer.compute.days > 1 and "days" in time.reply
    both = ask("A100 80GB vs H100 for llama 3 8b training")
    assert both.answer is not None and both.compare is not None
    sides = both.compare.variants
    assert [s.changes["gpu"] for s in sides] == ["a100-80gb", "h100-80gb"]
    assert all(s.answer is not None and s.answer.per_gpu_bytes.total > 0 for s in sides)


def test_unknown_names_ask_back_with_suggestions() -> None:
    answer = ask("lama 3 9b on a 3090")
    assert answer.answer is None and answer.clarify is not None
    assert "llama-3-8b" in answer.clarify or "llama-3.1-8b" in answer.clarify
    gpu = ask("llama 3 8b on an a800")  # a card the catalog will not gain
    assert gpu.clarify is not None and "a100-80gb" in gpu.clarify and gpu.answer is None


def test_engine_errors_become_replies() -> None:
    answer = ask("what about tp 3?", {"model": "llama-3-8b", "task": "train", "gpu": "h100-80gb",
                                      "gpu_count": 8})
    assert answer.intent == "invalid" and "tp" in answer.reply and answer.answer is None
    assert ask(None).intent == "invalid"  # type: ignore[arg-type]
    assert ask("hi", {"model": "<!channel>", "seq_len": "x"}).intent == "help"


def test_parse_keeps_only_request_fields() -> None:
    parsed = parse("qlora llama 3 8b r=64 on one 4090 with seq 8k", {"junk": 1, "model": "x"})
    assert parsed.merged["model"] == "llama-3-8b" and "junk" not in parsed.merged
    assert parsed.merged["quantization"] == "nf4" and parsed.merged["lora_rank"] == 64


def test_cli_ask(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ask", "can i lora qwen 14b on one 4090?"]) == 0
    assert "4090" in capsys.readouterr().out
    assert main(["ask", "what about r=64?", "--json", "--previous",
                 '{"model": "qwen3-14b", "task": "finetune", "finetune_method": "lora"}']) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["parsed"]["lora_rank"] == 64 and body["intent"] == "finetune"
    assert set(body) >= {"intent", "parsed", "answer", "reply", "clarify"}
