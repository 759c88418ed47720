"""End to end: the real service and the real Redis behind the bot's real HTTP endpoint. A slash
command comes in, the answer with the GPU count goes out through the response URL, then a
follow-up in that answer's thread changes one setting and keeps the rest."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
import redis
from api_support import REDIS_URL, redis_answers
from bot_fake_slack import BOT_USER
from bot_support import CHANNEL, block_text, message, real_service, running_bot

pytestmark = pytest.mark.skipif(not redis_answers(), reason="no Redis on 127.0.0.1:6379")


@pytest.fixture
def prefixes() -> Iterator[tuple[str, str]]:
    tag = uuid.uuid4().hex[:12]
    both = (f"fitcheck-e2e-{tag}:", f"fitcheck-bot-e2e-{tag}:")
    yield both
    raw = redis.Redis.from_url(REDIS_URL)
    for prefix in both:
        for key in raw.scan_iter(prefix + "*"):
            raw.delete(key)


def test_slash_command_then_a_thread_follow_up(prefixes: tuple[str, str]) -> None:
    service_prefix, bot_prefix = prefixes
    with real_service(redis_url=REDIS_URL, redis_prefix=service_prefix) as service, \
            running_bot(service, FITCHECK_REDIS_URL=REDIS_URL,
                        FITCHECK_BOT_REDIS_PREFIX=bot_prefix) as bot:
        assert bot.deps.seen.kind == "redis"
        assert bot.command("llama 3 8b, seq 4096, zero-3, a100 40gb").status_code == 200
        answer = bot.slack.wait_for("response_url")[0].args
        assert answer["response_type"] == "in_channel"
        verdict = answer["blocks"][1]["text"]["text"]
        assert verdict.startswith(":white_check_mark: *Fits on 8x A100 40GB"), verdict
        assert "total" in block_text(answer["blocks"])
        # the answer now sits in the channel; someone replies in its thread, no mention
        root = bot.slack.messages[CHANNEL][0]["ts"]
        follow = message("what about seq 8192?", channel=CHANNEL, channel_type="channel",
                         thread_ts=root, parent_user_id=BOT_USER)
        assert bot.event(follow).status_code == 200
        post = bot.slack.wait_for("chat.postMessage")[0].args
        assert post["thread_ts"] == root
        parsed = post["metadata"]["event_payload"]["parsed"]
        assert parsed["seq_len"] == 8192
        assert (parsed["model"], parsed["zero_stage"], parsed["gpu"]) == ("llama-3-8b", 3, "a100-40gb")
        assert "A100 40GB" in post["blocks"][0]["text"]["text"]
        # the follow-up's event id is claimed in Redis, under the bot's prefix
        raw = redis.Redis.from_url(REDIS_URL)
        assert any(k.decode().startswith(bot_prefix + "event:") for k in raw.scan_iter(bot_prefix + "*"))
        assert raw.exists(f"{bot_prefix}thread:{CHANNEL}:{root}")
