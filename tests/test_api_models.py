"""GET/POST /v1/models and GET /v1/gpus on the embedded store; the API key guards writes."""

from __future__ import annotations

import json
from pathlib import Path

from api_support import client

FIXTURES = Path(__file__).parent / "fixtures" / "hf_configs"
SMALL = {"layers": 16, "hidden": 2048, "heads": 16, "kv_heads": 8, "ffn": 8192, "vocab": 128256}


def test_lists_presets_with_counts_and_looks_up_aliases() -> None:
    with client() as api:
        listing = api.get("/v1/models").json()
        assert listing["registry"] == "embedded"
        ids = {m["id"] for m in listing["models"]}
        assert {"llama-3-8b", "mixtral-8x7b", "qwen2.5-72b"} <= ids
        one = api.get("/v1/models/Llama 3 8B").json()
        assert one["id"] == "llama-3-8b" and one["params_total"] == 8_030_261_248
        assert one["arch"]["layers"] == 32
        missing = api.get("/v1/models/llama-3-8")
        assert missing.status_code == 404 and "llama-3-8b" in missing.json()["suggestions"]


def test_gpus() -> None:
    with client() as api:
        gpus = api.get("/v1/gpus").json()["gpus"]
        assert any(g["id"] == "h100-80gb" for g in gpus)
        assert api.get("/v1/gpus/A100 40GB").json()["id"] == "a100-40gb"
        assert api.get("/v1/gpus/a100-41gb").status_code == 404


def test_register_then_estimate_by_name() -> None:
    with client() as api:
        r = api.post("/v1/models", json={"id": "team-llm-3b", "name": "Team 3B", "arch": SMALL})
        assert r.status_code == 201, r.text
        assert r.json()["params_total"] > 1e9
        same = api.post("/v1/models", json={"id": "team-llm-3b", "arch": SMALL})
        assert same.status_code == 200
        other = api.post("/v1/models", json={"id": "team-llm-3b", "arch": {**SMALL, "layers": 8}})
        assert other.status_code == 409
        est = api.post("/v1/estimate", json={"model": "Team-LLM-3B", "gpu": "l4-24gb"}).json()
        assert est["model"] == "team-llm-3b" and est["min_gpus"] >= 1
        assert "model=team-llm-3b" in est["link"]
        listed = {m["id"]: m for m in api.get("/v1/models").json()["models"]}
        assert listed["team-llm-3b"]["source"] == "registered"
        assert api.get("/v1/models/team-llm-3b").json()["arch"]["layers"] == 16


def test_register_a_pasted_hf_config() -> None:
    config = json.loads((FIXTURES / "qwen2.5-7b.json").read_text())
    with client() as api:
        r = api.post("/v1/models", json={"id": "our-qwen", "arch": config})
        assert r.status_code == 201 and r.json()["arch_format"] == "hf_config"


def test_register_rejects_bad_input() -> None:
    with client() as api:
        assert api.post("/v1/models", json={"id": "llama-3-8b", "arch": SMALL}).status_code == 409
        bad = api.post("/v1/models", json={"id": "Bad Id!", "arch": {**SMALL, "layers": -1}})
        assert bad.status_code == 422
        assert {e["field"] for e in bad.json()["errors"]} == {"id"}
        arch = api.post("/v1/models", json={"id": "ok-id", "arch": {**SMALL, "layers": -1}})
        assert arch.status_code == 422 and arch.json()["errors"][0]["field"] == "arch.layers"
        assert api.post("/v1/models", json={"id": "7b", "arch": SMALL}).status_code == 422


def test_api_key_guards_writes() -> None:
    with client(api_key="s3cret") as api:
        body = {"id": "guarded", "arch": SMALL}
        denied = api.post("/v1/models", json=body)
        assert denied.status_code == 401 and denied.headers["www-authenticate"] == "Bearer"
        assert api.post("/v1/models", json=body, headers={"X-API-Key": "nope"}).status_code == 401
        ok = api.post("/v1/models", json=body, headers={"Authorization": "Bearer s3cret"})
        assert ok.status_code == 201
        assert api.get("/v1/models/guarded").status_code == 200  # reads stay open
