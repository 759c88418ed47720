"""The bot through its real HTTP endpoint (uvicorn on a loopback port): requests signed as
Slack signs them, the real fitcheck service behind it, a fake Slack Web API recording what the
bot posts. Every way people ask, and what the bot must ignore."""

from __future__ import annotations

import io
import json
import logging
import time
from collections.abc import Iterator

import httpx
import pytest
from bot_fake_slack import BOT_ID, BOT_USER
from bot_support import (
    CHANNEL,
    DM,
    SECRET,
    TOKEN,
    BotUnderTest,
    block_text,
    buttons,
    event_id,
    mention,
    message,
    new_ts,
    real_service,
    running_bot,
    sign,
)

from bot.logs import setup_logging

QUESTION = "7B, seq 4096, ZeRO-3, A100 40GB?"


@pytest.fixture(scope="module")
def service_url() -> Iterator[str]:
    with real_service() as url:
        yield url


@pytest.fixture(scope="module")
def shared_bot(service_url: str) -> Iterator[BotUnderTest]:
    with running_bot(service_url) as running:
        yield running


@pytest.fixture
def bot(shared_bot: BotUnderTest) -> BotUnderTest:
    """The module's bot with a fresh fake Slack (every test sends new event ids and ts)."""
    shared_bot.wait_idle(0)
    shared_bot.slack.reset()
    return shared_bot


def sentinel(bot: BotUnderTest, posts_before: int) -> None:
    """A DM that is surely answered: once its answer is posted, everything sent before it has
    been dealt with (or dropped)."""
    bot.event(message("llama 3 8b on h100"))
    bot.slack.wait_for("chat.postMessage", posts_before + 1)


def test_bad_signatures_and_stale_requests_are_rejected(bot: BotUnderTest) -> None:
    body = json.dumps({"type": "event_callback", "event_id": event_id(),
                       "event": mention(QUESTION)})
    wrong = {**sign(body), "X-Slack-Signature": "v0=" + "0" * 64}
    assert bot.send(body, "application/json", wrong, signed=False).status_code == 401
    stale = sign(body, timestamp=int(time.time()) - 301)
    assert bot.send(body, "application/json", stale, signed=False).status_code == 401
    assert bot.send(body, "application/json", signed=False).status_code == 401
    other_secret = sign(body, secret="not-the-signing-secret")
    assert bot.send(body, "application/json", other_secret, signed=False).status_code == 401
    assert bot.slack.calls == []  # nothing reached Slack, not even auth.test


def test_url_verification_and_healthz(bot: BotUnderTest) -> None:
    challenge = "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"
    body = json.dumps({"type": "url_verification", "challenge": challenge, "token": "x"})
    answer = bot.send(body, "application/json")
    assert answer.status_code == 200 and challenge in answer.text
    health = httpx.get(bot.url + "/healthz")
    assert health.status_code == 200
    assert health.json()["status"] == "ok" and health.json()["mode"] == "http"


def test_a_mention_is_answered_in_its_thread(bot: BotUnderTest) -> None:
    event = mention(QUESTION)
    response = bot.event(event)
    assert response.status_code == 200
    post = bot.slack.wait_for("chat.postMessage")[0].args
    assert post["channel"] == CHANNEL and post["thread_ts"] == event["ts"]
    assert post["blocks"][0]["text"]["text"].startswith(":white_check_mark: *Fits on 4x A100 40GB")
    assert post["metadata"]["event_payload"]["parsed"]["zero_stage"] == 3
    assert post["unfurl_links"] is False
    assert post["text"].startswith("*Fits on 4x A100 40GB")


def test_a_thread_follow_up_keeps_the_request_and_changes_one_setting(bot: BotUnderTest) -> None:
    event = mention(QUESTION)
    bot.event(event)
    bot.slack.wait_for("chat.postMessage")
    follow = message("what about seq 8192?", channel=CHANNEL, channel_type="channel",
                     thread_ts=event["ts"], parent_user_id="U0ASKER")
    bot.event(follow)
    second = bot.slack.wait_for("chat.postMessage", 2)[1].args
    assert second["thread_ts"] == event["ts"]
    parsed = second["metadata"]["event_payload"]["parsed"]
    assert parsed["seq_len"] == 8192 and parsed["zero_stage"] == 3 and parsed["gpu"] == "a100-40gb"
    replies = bot.slack.calls_of("conversations.replies")[0].args
    assert replies["ts"] == event["ts"] and replies["include_all_metadata"] in ("1", "true")


def test_a_mention_or_a_dm_inside_a_thread_follows_up_there(bot: BotUnderTest) -> None:
    root = mention(QUESTION)
    bot.event(root)
    bot.slack.wait_for("chat.postMessage")
    bot.event(mention("and with a100-80gb?", thread_ts=root["ts"]))
    again = bot.slack.wait_for("chat.postMessage", 2)[1].args
    assert again["thread_ts"] == root["ts"]
    assert again["metadata"]["event_payload"]["parsed"]["gpu"] == "a100-80gb"
    assert again["metadata"]["event_payload"]["parsed"]["zero_stage"] == 3
    bot.event(message(QUESTION))
    assert bot.slack.wait_for("chat.postMessage", 3)[2].args.get("thread_ts") is None
    answer_ts = bot.slack.messages[DM][-1]["ts"]  # the person replies in the answer's thread
    bot.event(message("what about seq 8192?", thread_ts=answer_ts))
    reply = bot.slack.wait_for("chat.postMessage", 4)[3].args
    assert reply["thread_ts"] == answer_ts
    assert reply["metadata"]["event_payload"]["parsed"]["seq_len"] == 8192


def test_chit_chat_and_foreign_threads_get_no_reply(bot: BotUnderTest) -> None:
    event = mention(QUESTION)
    bot.event(event)
    bot.slack.wait_for("chat.postMessage")
    bot.event(message("thanks, that helps!", channel=CHANNEL, channel_type="channel",
                      thread_ts=event["ts"]))
    bot.event(message("llama 3 8b on h100?", channel=CHANNEL, channel_type="channel",
                      thread_ts=new_ts()))  # a thread the bot never answered in
    bot.event(message("llama 3 8b on h100?", channel=CHANNEL, channel_type="channel"))
    sentinel(bot, 1)
    assert len(bot.slack.calls_of("chat.postMessage")) == 2
    assert len(bot.slack.calls_of("conversations.replies")) == 1  # only the followed thread


def test_a_direct_message_is_answered_beside_it(bot: BotUnderTest) -> None:
    bot.event(message("can i qlora llama-3.1-8b on one 4090?"))
    post = bot.slack.wait_for("chat.postMessage")[0].args
    assert post["channel"] == DM and post.get("thread_ts") is None
    assert "4090" in block_text(post["blocks"])


def test_the_slash_command_acks_empty_and_answers_through_the_response_url(bot: BotUnderTest) -> None:
    response = bot.command(QUESTION)
    assert response.status_code == 200 and response.text == ""
    posted = bot.slack.wait_for("response_url")[0].args
    assert posted["response_type"] == "in_channel"
    assert posted["blocks"][0]["elements"][0]["text"] == f"> {QUESTION}"
    assert "Fits on 4x A100 40GB" in block_text(posted["blocks"])


@pytest.mark.parametrize("text", ["private 7B, seq 4096, ZeRO-3, A100 40GB?", "", "help",
                                  "asdf qwerty", "train gpt-5 on h100"])
def test_private_help_and_questions_back_go_to_the_asker_only(bot: BotUnderTest, text: str) -> None:
    bot.command(text)
    posted = bot.slack.wait_for("response_url")[0].args
    assert posted["response_type"] == "ephemeral"
    assert posted["text"]
    assert not posted["blocks"][0]["text"]["text"].startswith(">")  # no echo for one reader


def test_a_button_re_answers_in_place(bot: BotUnderTest) -> None:
    bot.event(mention(QUESTION))
    post = bot.slack.wait_for("chat.postMessage")[0]
    ts = bot.slack.messages[CHANNEL][0]["ts"]
    button = buttons(post.args["blocks"])["fitcheck_next_double_seq"]
    assert bot.press(button, ts).status_code == 200
    update = bot.slack.wait_for("chat.update")[0].args
    assert update["ts"] == ts and update["channel"] == CHANNEL
    assert update["metadata"]["event_payload"]["parsed"]["seq_len"] == 8192
    assert update["blocks"][0]["elements"][0]["text"] == "> what about seq 8192?"
    assert bot.slack.messages[CHANNEL][0]["blocks"] == update["blocks"]
    assert not bot.slack.calls_of("response_url")


def test_a_button_on_a_private_answer_replaces_it_through_the_response_url(bot: BotUnderTest) -> None:
    bot.command("private " + QUESTION)
    blocks = bot.slack.wait_for("response_url")[0].args["blocks"]
    bot.press(buttons(blocks)["fitcheck_next_bigger_gpu"], new_ts(), ephemeral=True)
    replaced = bot.slack.wait_for("response_url", 2)[1].args
    assert replaced["replace_original"] is True
    assert "A100 80GB" in block_text(replaced["blocks"])
    assert not bot.slack.calls_of("chat.update")


def test_the_launch_config_button_posts_the_stacks_config_in_the_thread(bot: BotUnderTest) -> None:
    bot.event(mention(QUESTION))
    post = bot.slack.wait_for("chat.postMessage")[0]
    ts = bot.slack.messages[CHANNEL][0]["ts"]
    button = buttons(post.args["blocks"])["fitcheck_launch"]
    assert button["text"]["text"] == "Launch config" and "/v1/estimate?" in button["value"]
    assert bot.press(button, ts).status_code == 200
    posted = bot.slack.wait_for("chat.postMessage", 2)[1].args
    assert posted["thread_ts"] == ts and posted["channel"] == CHANNEL
    text = block_text(posted["blocks"])
    # ZeRO-3 without TP/PP is DeepSpeed: its ds_config.json, with the batch the plan chose
    assert "DeepSpeed config" in text and "ds_config.json" in text
    assert '"stage": 3' in text and '"train_micro_batch_size_per_gpu": 1' in text
    assert "```" in text and "accelerate" in text  # the other configs are named with the link


def test_the_launch_button_on_a_private_answer_answers_privately(bot: BotUnderTest) -> None:
    bot.command("private " + QUESTION)
    blocks = bot.slack.wait_for("response_url")[0].args["blocks"]
    bot.press(buttons(blocks)["fitcheck_launch"], new_ts(), ephemeral=True)
    sent = bot.slack.wait_for("response_url", 2)[1].args
    assert sent["response_type"] == "ephemeral" and "ds_config.json" in block_text(sent["blocks"])
    assert len(bot.slack.calls_of("chat.postMessage")) == 0


def test_an_answer_that_does_not_fit_has_no_launch_button(bot: BotUnderTest) -> None:
    bot.event(mention("llama 3 70b full training on one a100 40gb"))
    post = bot.slack.wait_for("chat.postMessage")[0]
    assert "fitcheck_launch" not in buttons(post.args["blocks"])


def test_a_pasted_report_link_unfurls_with_its_verdict(bot: BotUnderTest, service_url: str) -> None:
    link = "https://fitcheck.example.com/v1/estimate?model=llama-3-8b&task=train&gpu=a100-40gb"
    event = {"type": "link_shared", "channel": CHANNEL, "user": "U0ASKER", "message_ts": new_ts(),
             "links": [{"url": link, "domain": "fitcheck.example.com"},
                       {"url": "https://fitcheck.example.com/docs", "domain": "fitcheck.example.com"}],
             "source": "conversations_history", "event_ts": new_ts()}
    bot.event(event)
    unfurl = bot.slack.wait_for("chat.unfurl")[0].args
    assert unfurl["channel"] == CHANNEL and unfurl["ts"] == event["message_ts"]
    assert list(unfurl["unfurls"]) == [link]
    card = unfurl["unfurls"][link]["blocks"]
    assert "A100 40GB" in card[0]["text"]["text"] and "total" in block_text(card)
    assert buttons(card)["fitcheck_report"]["url"] == link


def test_the_home_tab_says_how_to_ask(bot: BotUnderTest) -> None:
    bot.event({"type": "app_home_opened", "user": "U0ASKER", "channel": DM, "tab": "home",
               "event_ts": new_ts()})
    view = bot.slack.wait_for("views.publish")[0].args
    assert view["user_id"] == "U0ASKER" and view["view"]["type"] == "home"
    text = block_text(view["view"]["blocks"])
    assert "/fitcheck" in text and "For example" in text and "what about seq 8192?" in text


def test_retries_and_repeated_event_ids_are_answered_once(bot: BotUnderTest) -> None:
    first = event_id()
    bot.event(message(QUESTION), eid=first)
    bot.slack.wait_for("chat.postMessage")
    retry = {"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_error"}
    assert bot.event(message(QUESTION), eid=first, headers=retry).status_code == 200
    assert bot.event(message(QUESTION), eid=first).status_code == 200
    timeout_retry = {"X-Slack-Retry-Num": "2", "X-Slack-Retry-Reason": "http_timeout"}
    assert bot.event(message(QUESTION), headers=timeout_retry).status_code == 200
    sentinel(bot, 1)
    assert len(bot.slack.calls_of("chat.postMessage")) == 2


def test_its_own_and_other_bots_messages_and_subtypes_are_ignored(bot: BotUnderTest) -> None:
    bot.event(message(QUESTION, user=BOT_USER))
    bot.event(message(QUESTION, user="U0OTHERBOT", bot_id="B0OTHER"))
    bot.event(message(QUESTION, bot_id=BOT_ID))
    bot.event(message(QUESTION, subtype="message_changed"))
    bot.event(message(QUESTION, subtype="bot_message", username="someone"))
    bot.event(mention(QUESTION, bot_id="B0OTHER"))
    sentinel(bot, 0)
    assert len(bot.slack.calls_of("chat.postMessage")) == 1


def test_slack_rate_limits_are_waited_out(bot: BotUnderTest) -> None:
    bot.slack.rate_limit("chat.postMessage", times=2)
    bot.event(message(QUESTION))
    calls = bot.slack.wait_for("chat.postMessage", 3)
    assert len(calls) == 3
    assert len(bot.slack.messages[DM]) == 1


def test_refused_metadata_is_dropped_and_the_blocks_kept(bot: BotUnderTest) -> None:
    bot.slack.refuse_blocks("chat.postMessage", "invalid_metadata_format")
    bot.event(message(QUESTION))
    first, second = bot.slack.wait_for("chat.postMessage", 2)
    assert first.args["metadata"] and "metadata" not in second.args
    assert second.args["blocks"] == first.args["blocks"]


@pytest.mark.parametrize("where", ["chat.postMessage", "response_url"])
def test_refused_blocks_fall_back_to_the_plain_text(bot: BotUnderTest, where: str) -> None:
    bot.slack.refuse_blocks(where)
    if where == "response_url":
        bot.command(QUESTION)
    else:
        bot.event(message(QUESTION))
    calls = bot.slack.wait_for(where, 2)
    assert calls[0].args.get("blocks") and "blocks" not in calls[1].args
    assert calls[1].args["text"].startswith("*Fits on 4x A100 40GB")


def test_replies_never_carry_pings_from_the_question(bot: BotUnderTest) -> None:
    bot.event(mention("<!channel> <!here> @everyone <@U0999> <!subteam^S1|@infra> " + QUESTION))
    bot.event(message("<!channel> @here <@U0999> blorp"))
    posts = bot.slack.wait_for("chat.postMessage", 2)
    for post in posts:
        text = json.dumps(post.args["blocks"]) + post.args["text"]
        for ping in ("<!channel>", "<!here>", "@everyone", "<@U0999>", "@here", "<!subteam"):
            assert ping not in text
        assert all(t.get("verbatim") for b in post.args["blocks"] if b["type"] == "section"
                   for t in [b["text"]])


def test_no_token_or_secret_in_any_log_line_of_a_whole_exchange(bot: BotUnderTest) -> None:
    stream = io.StringIO()
    root = logging.getLogger()
    level = root.level
    handler = setup_logging("DEBUG", [TOKEN, SECRET], stream)
    try:
        bot.event(mention(QUESTION))
        bot.slack.wait_for("chat.postMessage")
        bot.command("private " + QUESTION)
        bot.slack.wait_for("response_url")
        bot.wait_idle(0)
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
    written = stream.getvalue()
    assert "chat.postMessage" in written  # slack_sdk's debug lines were captured
    assert TOKEN not in written and SECRET not in written and "xoxb-" not in written
    posts = bot.slack.calls_of("chat.postMessage")
    assert all(c.headers["authorization"] == f"Bearer {TOKEN}" for c in posts)  # it was used
