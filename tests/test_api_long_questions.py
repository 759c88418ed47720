"""A long chat question is read up to a stated limit (parsing costs time in proportion to the
text, on the event loop), cut at a word, and the reply says how much was read."""

from __future__ import annotations

from service.api.ask_routes import PARSED_CHARS, cut_question
from tests.api_support import client


def test_a_short_question_is_read_whole() -> None:
    assert cut_question("llama 3 8b on 8 a100s") == ("llama 3 8b on 8 a100s", None)


def test_a_long_question_is_cut_at_a_word_and_says_so() -> None:
    text = "llama 3 8b on 8 a100 40gb with zero 3 " + "lorem ipsum " * 400
    kept, note = cut_question(text)
    assert len(kept) <= PARSED_CHARS and text.startswith(kept) and text[len(kept)] == " "
    assert note is not None and f"{len(kept):,}" in note and f"{len(text):,}" in note


def test_the_reply_to_a_long_question_says_what_was_read() -> None:
    text = "llama 3 8b, seq 4096, zero 3 " + "blah " * 700
    with client(workers=0) as api:
        response = api.post("/v1/ask", json={"text": text, "previous": None})
    assert response.status_code == 200
    body = response.json()
    assert body["parsed"]["model"] == "llama-3-8b"
    assert any("I read only the first" in n for n in body["notes"])
    assert "I read only the first" in body["reply"]
