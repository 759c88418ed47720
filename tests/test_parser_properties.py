"""Property tests: ``parse`` and ``ask`` never raise, on any text up to 10,000 characters and any
``previous`` a client might send, and replies never carry markup that pings or breaks formatting.

Bounded example counts and no deadline (the engine runs for texts that name a model); speed is
measured by ``bench/parser_accuracy.py``, not asserted here.
"""

from __future__ import annotations

from typing import Any

from ask_support import ask
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.parser import parse
from service.parser.followup import REQUEST_FIELDS
from service.parser.normalize import MAX_CHARS
from service.parser.types import INTENTS

FRAGMENTS = (
    "llama 3 8b", "qwen 14b", "lama 3 9b", "7B", "-7b", "0.0001b", "1e9b", "mixtral 8x7b",
    "8x a100 80gb", "4 nodes of 8xH100", "2x4090", "one 4090", "h800s", "0 gpus", "how many h100s",
    "seq 4096", "seq -1", "128k ctx", "1e30 tokens", "3T tokens", "zero-3", "z2 or z3", "vs", "or",
    "lora r=16", "qlora", "r=0", "awq", "fp8 kv", "50 users", "tp=8 pp=4", "grad ckpt", "no flash attn",
    "per_device_train_batch_size=4", "gradient_accumulation_steps=8", "bf16=True", '"stage": 3',
    "--tensor-model-parallel-size 8", "48 layers, d_model 6144, 48 heads", "vocab 100k", "{", "}",
    '{"num_hidden_layers": 2, "hidden_size": 0}', "<!channel>", "<@U123>", "<http://x|y>", "&gt;",
    ":fire:", "`", "```", "$2/hr", "mfu 40%", "how long", "serve", "train", "help", "?", "\n", "🔥",
    "DROP TABLE", "<script>", "Traceback (most recent call last):", "\x00", "\u202e", "ǅ", "İ",
)
chat = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=12)), max_size=25) \
    .map(" ".join)
values = st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12),
                   st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=30),
                   st.dictionaries(st.text(max_size=8), st.integers(), max_size=3))
previous = st.one_of(st.none(), st.dictionaries(
    st.one_of(st.sampled_from(sorted(REQUEST_FIELDS)), st.text(max_size=10)), values, max_size=8))
SETTINGS = settings(max_examples=120, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _safe(reply: str) -> bool:
    return not any(s in reply for s in ("<!", "<@", "@channel", "@here")) \
        and "<" not in reply.replace("&lt;", "")


@SETTINGS
@given(st.text(max_size=MAX_CHARS))
def test_parse_never_raises(text: str) -> None:
    assert parse(text).intent in INTENTS


@SETTINGS
@given(chat, previous)
def test_ask_never_raises_and_reply_is_safe(text: str, prev: dict[str, Any] | None) -> None:
    answer = ask(text, prev)
    assert answer.intent in INTENTS
    assert answer.reply and _safe(answer.reply)
    assert all(key in REQUEST_FIELDS for key in answer.parsed)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet="0123456789kxbt .,-=:<>@!&;`{}\"'", min_size=MAX_CHARS - 100,
               max_size=MAX_CHARS))
def test_long_odd_text(text: str) -> None:
    assert ask(text).intent in INTENTS


def test_over_the_cap_is_refused_kindly() -> None:
    answer = ask("llama 3 8b " * 1000)
    assert answer.intent == "invalid" and "10,000" in answer.reply
