"""Each replica's ready answers (``Estimates.answer_json``), which let ``/v1/estimate`` cache
hits run at the framework's floor: the same bytes as a fresh answer, counted as hits, one
entry per stated request and base URL, never for a registered model, bounded."""

from __future__ import annotations

import json

import pytest
from api_support import TRAIN, client

from service import estimates

SMALL = {"layers": 16, "hidden": 2048, "heads": 16, "kv_heads": 8, "ffn": 8192, "vocab": 32000}


def test_a_repeat_is_the_same_answer_and_a_hit() -> None:
    with client() as api:
        first = api.post("/v1/estimate", json=TRAIN)
        second = api.post("/v1/estimate", json=TRAIN)
        assert first.status_code == second.status_code == 200
        assert first.content == second.content
        assert second.headers["content-type"] == "application/json"
        assert json.loads(second.content)["link"].startswith("http://testserver/v1/estimate?")
        text = api.get("/metrics").text
        assert "fitcheck_cache_hits_total 1.0" in text
        assert "fitcheck_cache_misses_total 1.0" in text
        # another host, another link: the base URL is part of the key
        other = api.post("/v1/estimate", json=TRAIN, headers={"host": "fitcheck.example"})
        assert json.loads(other.content)["link"].startswith("http://fitcheck.example/")


def test_registered_models_are_never_kept_and_the_store_is_bounded(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(estimates, "HOT_ENTRIES", 3)
    with client() as api:
        assert api.post("/v1/models", json={"id": "team-3b", "arch": SMALL}).status_code == 201
        for _ in range(2):
            r = api.post("/v1/estimate", json={"model": "team-3b", "seq_len": 2048})
            assert r.status_code == 200
        hot = api.app.state.services.estimates._hot  # type: ignore[attr-defined]
        assert not any("team-3b" in key for key in hot)
        for seq in (1024, 2048, 4096, 8192):
            assert api.post("/v1/estimate", json={**TRAIN, "seq_len": seq}).status_code == 200
        assert len(hot) == 3 and not any('"seq_len":1024' in key for key in hot)
