"""POST /v1/ask: the parser's answer through the API, with a permalink."""

from __future__ import annotations

from urllib.parse import urlsplit

from api_support import client


def test_ask_answers_with_a_link() -> None:
    with client() as api:
        r = api.post("/v1/ask", json={"text": "can I train llama 3 8b on 8 a100 40gb with "
                                              "zero 3?", "previous": None})
        assert r.status_code == 200
        body = r.json()
        assert {"intent", "parsed", "answer", "reply", "clarify", "link"} <= set(body)
        if body["answer"] is not None:
            assert body["answer"]["link"] == body["link"]
            path = urlsplit(body["link"])
            again = api.get(f"{path.path}?{path.query}", headers={"Accept": "application/json"})
            assert again.status_code == 200


def test_ask_never_fails_on_garbage() -> None:
    with client() as api:
        for text in ("asdf", "🙂" * 50, "{}", "8x"):
            assert api.post("/v1/ask", json={"text": text}).status_code == 200
        assert api.post("/v1/ask", json={"text": ""}).status_code == 422
        assert api.post("/v1/ask", json={"text": "x" * 5000}).status_code == 422
