"""What the bot posts, rendered from real service answers (captured in
``fixtures/bot_ask_answers.json``): verdict first, the table, one assumptions line, the report
link and the next-question buttons; friendly help and questions back; Slack's limits kept for
any input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from bot_support import block_text, buttons
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.blocks import answer_message, error_message, unfurl_blocks
from bot.constants import (
    ACTION_LAUNCH,
    ACTION_REPORT,
    MAX_BUTTON_TEXT,
    MAX_BUTTON_VALUE,
    MAX_FALLBACK_TEXT,
    MAX_MESSAGE_BLOCKS,
    MAX_SECTION_TEXT,
    METADATA_EVENT,
)
from bot.followups import decode_press, next_questions
from bot.service_client import AskResult, ServiceError, read_answer

ANSWERS = json.loads((Path(__file__).parent / "fixtures" / "bot_ask_answers.json").read_text())


def result(name: str) -> AskResult:
    return AskResult.from_json(ANSWERS[name]["response"])


def assert_within_limits(blocks: list[dict[str, Any]], text: str) -> None:
    assert 0 < len(blocks) <= MAX_MESSAGE_BLOCKS
    assert 0 < len(text) <= MAX_FALLBACK_TEXT
    for block in blocks:
        if block["type"] == "section":
            assert 0 < len(block["text"]["text"]) <= MAX_SECTION_TEXT
        if block["type"] == "context":
            assert 0 < len(block["elements"]) <= 10
            assert all(0 < len(e["text"]) <= 3000 for e in block["elements"])
        if block["type"] == "actions":
            assert 0 < len(block["elements"]) <= 25
            for element in block["elements"]:
                assert 0 < len(element["text"]["text"]) <= MAX_BUTTON_TEXT
                assert len(element.get("value", "")) <= MAX_BUTTON_VALUE
                assert len(element["action_id"]) <= 255


def test_a_fit_reads_verdict_first_then_table_assumptions_and_buttons() -> None:
    message = answer_message(result("fits"))
    first = message.blocks[0]["text"]["text"]
    assert first == (":white_check_mark: *Fits on 4x A100 40GB SXM with ZeRO-3 + full recompute, "
                     "micro-batch 1*")
    text = block_text(message.blocks)
    table = next(b["text"]["text"] for b in message.blocks if "```" in b.get("text", {}).get("text", ""))
    for row in ("weights", "gradients", "optimizer", "activations", "overhead", "total"):
        assert row in table
    assert "35.0 GB  of 40.2 GB budget (87%)" in table
    assert "Per GPU (GB):" not in text  # the reply's breakdown line is replaced by the table
    contexts = [b for b in message.blocks if b["type"] == "context"]
    assert len(contexts) == 1 and contexts[0]["elements"][0]["text"].startswith("_Assumed:_")
    found = buttons(message.blocks)
    assert found[ACTION_REPORT]["url"].startswith("https://fitcheck.example.com/v1/estimate?")
    # the plan already uses ZeRO-3 and full recompute: no button asks for them again
    assert set(found) == {ACTION_REPORT, ACTION_LAUNCH, "fitcheck_next_bigger_gpu",
                          "fitcheck_next_double_seq"}
    assert found["fitcheck_next_bigger_gpu"]["text"]["text"] == "Bigger GPU: A100 80GB"
    assert message.text.startswith("*Fits on 4x A100 40GB")
    assert message.metadata == {"event_type": METADATA_EVENT, "event_payload": {
        "intent": "train", "parsed": ANSWERS["fits"]["response"]["parsed"]}}
    assert_within_limits(message.blocks, message.text)


def test_does_not_fit_says_so_first_with_a_cross() -> None:
    message = answer_message(result("does_not_fit"))
    first = message.blocks[0]["text"]["text"]
    assert first.startswith(":x: *Does not fit on 2x A100 40GB SXM")
    assert "of 40.2 GB budget" in block_text(message.blocks)
    assert "fitcheck_next_bigger_gpu" in buttons(message.blocks)


def test_no_gpu_offers_one_and_every_button_re_asks_with_one_change() -> None:
    res = result("no_gpu")
    message = answer_message(res)
    assert not message.blocks[0]["text"]["text"].startswith((":x:", ":white_check_mark:"))
    found = buttons(message.blocks)
    assert {"fitcheck_next_recompute", "fitcheck_next_zero3", "fitcheck_next_pick_gpu",
            "fitcheck_next_double_seq"} <= set(found)
    for action_id, button in found.items():
        if action_id == ACTION_REPORT:
            continue
        press = decode_press(button["value"])
        assert press is not None and press.base == res.parsed
        changed = {k for k in press.previous if press.previous[k] != res.parsed.get(k)}
        assert len(changed) == 1, (action_id, changed)
    assert decode_press(found["fitcheck_next_double_seq"]["value"]).previous["seq_len"] == 8192  # type: ignore[union-attr]


def test_serving_shows_kv_cache_and_offers_a_longer_context() -> None:
    message = answer_message(result("serving"))
    text = block_text(message.blocks)
    assert "KV cache" in text and "Serves llama-3.1-70b" in text
    found = buttons(message.blocks)
    assert "fitcheck_next_zero3" not in found and "fitcheck_next_recompute" not in found
    assert found["fitcheck_next_double_seq"]["text"]["text"] == "Double the context (32,768)"


@pytest.mark.parametrize("name", ["compare", "time_cost", "followup"])
def test_other_answers_render_within_limits(name: str) -> None:
    message = answer_message(result(name))
    assert_within_limits(message.blocks, message.text)
    assert ACTION_REPORT in buttons(message.blocks)


def test_help_and_questions_back_are_friendly_with_examples() -> None:
    help_text = block_text(answer_message(result("help")).blocks)
    assert "For example" in help_text and "/fitcheck" in help_text
    for name, lead in (("clarify", ":thinking_face:"), ("invalid", ":wave:")):
        message = answer_message(result(name))
        assert message.blocks[0]["text"]["text"].startswith(lead)
        assert "For example: `" in block_text(message.blocks)
        assert not buttons(message.blocks)


def test_an_echoed_question_is_quoted_and_defused() -> None:
    message = answer_message(result("fits"), asked="<!channel> 7B on <@U123> A100 @here")
    echo = message.blocks[0]["elements"][0]["text"]
    assert echo.startswith("> ") and "7B on" in echo
    for bad in ("<!channel>", "<@U123>", "@here"):
        assert bad not in echo


def test_apologies_say_what_happened() -> None:
    down = error_message(ServiceError("timeout", "timed out after 8 s"))
    assert "Sorry" in down.text and "timed out after 8 s" in down.text and "try again" in down.text
    rejected = error_message(ServiceError("rejected", "text: too long"))
    assert "couldn't read that" in rejected.text and "Ask like" in rejected.text


def test_an_unfurl_card_has_the_verdict_table_and_link() -> None:
    answer = read_answer(ANSWERS["fits"]["response"]["answer"])
    blocks = unfurl_blocks(answer, "https://fitcheck.example.com/v1/estimate?model=7b")
    assert blocks[0]["text"]["text"].startswith(":white_check_mark: *Fits on 4x NVIDIA A100 40GB")
    assert "```" in blocks[1]["text"]["text"]
    assert buttons(blocks)[ACTION_REPORT]["url"].endswith("model=7b")


def test_buttons_never_exceed_the_value_limit() -> None:
    huge = {"arch": {"layers": 1, "blob": "x" * 3000}, "task": "train"}
    assert next_questions(huge, "train")
    res = AskResult("train", huge, read_answer(ANSWERS["fits"]["response"]["answer"]), "*Fits*",
                    None, None)
    message = answer_message(res)
    assert not {k for k in buttons(message.blocks) if k.startswith("fitcheck_next_")}


reply_lines = st.lists(st.text(min_size=0, max_size=5000), min_size=1, max_size=80)


@settings(max_examples=60, deadline=None)
@given(lines=reply_lines, intent=st.sampled_from(["train", "infer", "help", "invalid", "compare"]),
       with_answer=st.booleans(), echo=st.text(max_size=6000))
def test_any_reply_stays_within_slack_limits(lines: list[str], intent: str, with_answer: bool,
                                             echo: str) -> None:
    answer = read_answer(ANSWERS["fits"]["response"]["answer"]) if with_answer else None
    res = AskResult(intent, {"model": "x" * 500, "seq_len": 4096}, answer, "\n".join(lines),
                    None, "https://fitcheck.example.com/v1/estimate?x=" + "y" * 4000)
    message = answer_message(res, asked=echo or None)
    assert_within_limits(message.blocks, message.text)
    for block in message.blocks:
        for element in block.get("elements", []):
            assert len(element.get("url", "")) <= 3000
