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


SMALL = {"layers": 16, "hidden": 2048, "heads": 16, "kv_heads": 8, "ffn": 8192, "vocab": 128256}


def test_a_registered_model_answers_in_chat_as_in_the_api_and_in_follow_ups() -> None:
    """One road: `/v1/ask` resolves a team's registered model through the same registry, so
    "team-llm-3b" is that model (not a generic 3B) and the per-GPU total is the same as
    `/v1/estimate` gives, in the question and in a thread follow-up."""
    with client() as api:
        assert api.post("/v1/models", json={"id": "team-llm-3b", "arch": SMALL}).status_code == 201
        chat = api.post("/v1/ask", json={"text": "can I train team-llm-3b on an l4?"}).json()
        assert chat["parsed"]["model"] == "team-llm-3b" and "params_b" not in chat["parsed"]
        rest = api.post("/v1/estimate", json=chat["parsed"]).json()
        assert chat["answer"]["model"] == "team-llm-3b"
        assert chat["answer"]["per_gpu_bytes"]["total"] == rest["per_gpu_bytes"]["total"]
        assert chat["answer"]["params_total"] == rest["params_total"]
        follow = api.post("/v1/ask", json={"text": "what about seq 8192?",
                                           "previous": chat["parsed"]}).json()
        assert follow["answer"] is not None, follow["reply"]
        assert follow["parsed"]["model"] == "team-llm-3b" and follow["parsed"]["seq_len"] == 8192
        again = api.post("/v1/estimate", json=follow["parsed"]).json()
        assert follow["answer"]["per_gpu_bytes"]["total"] == again["per_gpu_bytes"]["total"]
        unknown = api.post("/v1/ask", json={"text": "train team-llm-9b on an l4"}).json()
        assert unknown["answer"] is None or unknown["answer"]["model"] != "team-llm-3b"
