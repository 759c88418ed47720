"""Nothing a person typed can ping a channel or a user through the bot, and no token reaches a
log line."""

from __future__ import annotations

import io
import logging

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.logs import RedactSecrets, setup_logging
from bot.safety import clean_question, safe_mrkdwn, safe_plain, truncate

PINGS = ("<!channel>", "<!here>", "<!everyone>", "<!subteam^S0123|@infra>", "<@U0123ABC>",
         "<@W0123|bob>", "@channel", "@here", "@everyone", "＠channel")


@pytest.mark.parametrize("ping", PINGS)
def test_posted_text_never_pings(ping: str) -> None:
    out = safe_mrkdwn(f"llama 3 8b {ping} on a100")
    assert "<!" not in out and "<@" not in out
    assert "@channel" not in out and "@here" not in out and "@everyone" not in out
    assert "llama 3 8b" in out and "on a100" in out


def test_escaped_markup_from_the_service_is_removed_and_entities_kept() -> None:
    assert safe_mrkdwn("model &lt;@U123&gt; seq &lt; 8k &amp; more") == "model  seq &lt; 8k &amp; more"
    assert safe_mrkdwn("a < b & c > d") == "a &lt; b &amp; c &gt; d"


def test_channels_keep_their_name_and_links_their_address() -> None:
    text = "see <#C0123|ml-infra> and <https://fitcheck.example.com/v1/estimate?model=7b|this>"
    assert safe_mrkdwn(text) == "see #ml-infra and this"
    assert safe_plain("<!here> bigger GPU") == " bigger GPU"


def test_questions_lose_the_mention_and_markup_and_decode_entities() -> None:
    text = "<@UFITBOT> can I train &lt;7B&gt; on <@U999> 8x A100 &amp; zero-3? <!here>"
    assert clean_question(text, "UFITBOT") == "can I train <7B> on 8x A100 & zero-3?"
    assert clean_question("<https://x.test/v1/estimate?a=1>", None) == "https://x.test/v1/estimate?a=1"


@given(st.text(max_size=300))
def test_no_input_survives_as_a_ping(text: str) -> None:
    for ping in PINGS[:6]:
        out = safe_mrkdwn(text + ping + text)
        assert "<!" not in out and "<@" not in out
        lowered = out.lower()
        assert "@channel" not in lowered and "@here" not in lowered and "@everyone" not in lowered


@given(st.text(max_size=500), st.integers(min_value=10, max_value=400))
def test_truncate_respects_the_limit(text: str, limit: int) -> None:
    out = truncate(text, limit)
    assert len(out) <= limit
    if len(text) <= limit:
        assert out == text


def test_truncate_keeps_code_blocks_closed_and_entities_whole() -> None:
    out = truncate("```" + "row 1 &amp; x\n" * 50 + "```", 100)
    assert out.count("```") == 2 and len(out) <= 100
    assert not out.rstrip("`…\n").endswith(("&", "&am", "&amp"))


def test_log_lines_never_carry_a_token() -> None:
    stream = io.StringIO()
    level = logging.getLogger().level
    handler = setup_logging("DEBUG", ["plain-signing-secret-value"], stream)
    try:
        log = logging.getLogger("slack_sdk.web.test")
        log.debug("Sending: headers %s", {"Authorization": "Bearer xoxb-123-456-abcdef"})
        log.info("app token xapp-1-A0-123-abc and secret plain-signing-secret-value")
        try:
            raise RuntimeError("failed with token xoxp-9-9-9")
        except RuntimeError:
            logging.getLogger("fitcheck_bot").exception("boom")
    finally:
        logging.getLogger().removeHandler(handler)
        logging.getLogger().setLevel(level)
    written = stream.getvalue()
    assert written.count("[redacted]") >= 4
    for secret in ("xoxb-", "xapp-", "xoxp-", "plain-signing-secret-value"):
        assert secret not in written


def test_the_filter_keeps_ordinary_messages() -> None:
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "answered %s in %d ms", ("C1", 12), None)
    assert RedactSecrets().filter(record) and record.getMessage() == "answered C1 in 12 ms"
