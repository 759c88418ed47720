"""POST /v1/estimate and its permalink: the contract's fields, planner modes, links, errors."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from api_support import TRAIN, client
from fastapi.testclient import TestClient

from service.permalink import decode_arch, encode_arch, short_float

FIXTURES = Path(__file__).parent / "fixtures" / "hf_configs"
PLAN_KEYS = {"dp", "tp", "pp", "cp", "zero_stage", "recompute", "micro_batch"}
BYTES_KEYS = {"weights", "gradients", "optimizer", "activations", "kv_cache", "overhead", "total"}


@pytest.fixture(scope="module")
def api() -> TestClient:
    with client() as c:
        yield c


def path_of(link: str) -> str:
    parts = urlsplit(link)
    return parts.path + ("?" + parts.query if parts.query else "")


def test_answer_has_the_contract_fields(api: TestClient) -> None:
    r = api.post("/v1/estimate", json=TRAIN)
    assert r.status_code == 200, r.text
    body = r.json()
    for key in ("params_total", "params_active", "per_gpu_bytes", "gpu", "fits", "min_gpus",
                "plan", "compute", "assumptions", "formulas", "link"):
        assert key in body
    assert set(body["per_gpu_bytes"]) >= BYTES_KEYS
    assert all(isinstance(v, int) for v in body["per_gpu_bytes"].values())
    assert set(body["plan"]) >= PLAN_KEYS
    assert body["params_total"] == 8_030_261_248


def test_gpu_without_count_gives_the_planners_fewest(api: TestClient) -> None:
    # Llama-3-8B with ZeRO-3 is DeepSpeed data parallelism; 4 A100 40GB hold the states but
    # not the fp32 logits of a 128k vocabulary on top
    body = api.post("/v1/estimate", json=TRAIN).json()
    assert body["min_gpus"] == 8 and body["plan"]["gpus"] == 8 and body["fits"] is True
    assert body["per_gpu_bytes"]["total"] <= body["gpu_usable_bytes"]
    assert body["as_stated"]["fits"] is False  # one GPU as stated
    assert body["verdict"].startswith("Fits on 8x")


def test_gpu_with_count_answers_for_that_count(api: TestClient) -> None:
    body = api.post("/v1/estimate", json={**TRAIN, "gpu_count": 8, "tokens": 1e12}).json()
    assert body["plan"]["gpus"] == 8
    # as stated (ZeRO-3, no recompute, 32 GB of activations) it does not fit; the planner's
    # layout on the 8 GPUs does, and the top level is the verdict's (review 19)
    assert body["as_stated"]["fits"] is False
    assert body["planner"]["fits"] is True and body["fits"] is True
    assert body["per_gpu_bytes"]["total"] == body["planner"]["layout"]["per_gpu_bytes"]["total"]
    assert body["min_gpus"] == 8
    assert body["planner"]["mode"] == "given" and body["planner"]["layout"]["plan"]["gpus"] == 8
    assert body["compute"]["gpu_hours"] > 0


def test_given_gpus_with_no_layout_stated_answer_with_the_planners_layout(api: TestClient) -> None:
    """'DeepSeek-V2-Lite on 8 H100s' (review 14): no layout was stated, so ZeRO-0 is only
    fitcheck's default; the top level had said fits: false at 289.7 GB under a verdict 'Fits
    ... ZeRO-3 + EP=2' and a band that did not contain the total. Now fits, the figures, the
    layout and the band are the verdict's, and the default layout is under as_stated."""
    body = api.post("/v1/estimate", json={"model": "deepseek-v2-lite", "gpu": "h100-80gb",
                                          "gpu_count": 8}).json()
    assert body["verdict"].startswith("Fits") and body["fits"] is True
    total = body["per_gpu_bytes"]["total"]
    assert total == body["planner"]["layout"]["per_gpu_bytes"]["total"]
    assert body["plan"] == body["planner"]["layout"]["plan"]
    assert body["error_band"]["low_bytes"] <= total <= body["error_band"]["high_bytes"]
    assert body["as_stated"]["plan"]["zero_stage"] == 0 and body["as_stated"]["fits"] is False


def test_serving_and_no_gpu(api: TestClient) -> None:
    serve = api.post("/v1/estimate", json={"model": "llama-3.1-70b", "task": "infer",
                                           "seq_len": 16384, "concurrent": 50,
                                           "gpu": "h100-80gb"}).json()
    # engines people deploy: 2 replicas of TP=4 on one node (not TP=2 x PP=3 on 6)
    assert serve["min_gpus"] == 8 and (serve["plan"]["tp"], serve["plan"]["pp"]) == (4, 1)
    assert serve["per_gpu_bytes"]["kv_cache"] > 0
    bare = api.post("/v1/estimate", json={"model": "7B"}).json()
    assert bare["fits"] is None and bare["gpu"] is None


def test_link_is_stable_short_and_normalised(api: TestClient) -> None:
    a = api.post("/v1/estimate", json=TRAIN).json()["link"]
    b = api.post("/v1/estimate", json={"gpu": "A100 40GB", "zero_stage": 3, "seq_len": 4096,
                                       "model": "Llama 3 8B"}).json()["link"]
    assert a == b
    assert path_of(a) == "/v1/estimate?model=llama-3-8b&seq_len=4096&zero_stage=3&gpu=a100-40gb"
    assert len(path_of(a)) < 100


def test_link_json_equals_the_post_answer(api: TestClient) -> None:
    posted = api.post("/v1/estimate", json={**TRAIN, "tokens": 2e12, "mfu": 0.4}).json()
    got = api.get(path_of(posted["link"]), headers={"Accept": "application/json"})
    assert got.status_code == 200
    assert got.headers["content-type"].startswith("application/json")
    assert got.json() == posted


def test_link_html_is_the_report(api: TestClient) -> None:
    link = api.post("/v1/estimate", json={**TRAIN, "tokens": 1e12}).json()["link"]
    r = api.get(path_of(link), headers={"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    page = r.text
    for marker in ("id=verdict", "<svg id=memory-chart", "class=capacity", "id=components",
                   "id=fits-on", "id=compute", "Assumptions", "Fits on 8x"):
        assert marker in page
    assert "http" not in page.split("<main>")[0].replace("http-equiv", "")  # nothing external


def test_inline_arch_round_trips_through_the_link(api: TestClient) -> None:
    config = json.loads((FIXTURES / "llama-3-8b.json").read_text())
    posted = api.post("/v1/estimate", json={"arch": config, "gpu": "h100-80gb"}).json()
    assert posted["params_total"] == 8_030_261_248
    assert len(posted["link"]) < 800
    again = api.get(path_of(posted["link"]), headers={"Accept": "application/json"}).json()
    assert again == posted


def test_permalink_helpers() -> None:
    assert short_float(1e12) == "1e12" and short_float(0.4) == "0.4" and short_float(7.0) == "7"
    arch = {"layers": 2, "hidden": 64, "heads": 4, "ffn": 128, "vocab": 100}
    assert decode_arch(encode_arch(arch)) == arch


def test_422_names_every_bad_field(api: TestClient) -> None:
    r = api.post("/v1/estimate", json={"model": "llama-3-8b", "seq_len": 0, "task": "fly",
                                       "zero_stage": 7, "colour": "red", "mfu": "fast"})
    assert r.status_code == 422
    assert r.headers["content-type"] == "application/problem+json"
    problem = r.json()
    fields = {e["field"] for e in problem["errors"]}
    assert fields == {"seq_len", "task", "zero_stage", "colour", "mfu"}
    accepted = {e["field"]: e["accepted"] for e in problem["errors"]}
    assert accepted["task"] == "train, finetune, infer"
    assert accepted["zero_stage"] == "an integer 0..3"
    assert problem["status"] == 422 and problem["type"].endswith("invalid-input")


def test_engine_errors_are_422_too(api: TestClient) -> None:
    r = api.post("/v1/estimate", json={"model": "llama-3-8b", "tp": 3, "gpu": "h100-80gb",
                                       "gpu_count": 3})
    assert r.status_code == 422
    assert r.json()["errors"][0]["field"] == "tp"
    bad_arch = api.post("/v1/estimate", json={"arch": {"layers": 0, "hidden": 64, "heads": 4,
                                                       "ffn": 1, "vocab": 10}})
    assert bad_arch.status_code == 422
    assert bad_arch.json()["errors"][0]["field"].startswith("arch.")


def test_unknown_names_are_422_naming_the_field_with_suggestions(api: TestClient) -> None:
    """A name the catalog lacks is a bad value of the model or gpu field: 422 with the field and
    the closest names, as every other bad field (404 is for looking up a resource by id)."""
    r = api.post("/v1/estimate", json={"model": "llama-3-8"})
    assert r.status_code == 422 and "llama-3-8b" in r.json()["suggestions"]
    assert "Did you mean llama-3-8b" in r.json()["detail"]
    assert r.json()["errors"][0]["field"] == "model"
    g = api.post("/v1/estimate", json={"model": "llama-3-8b", "gpu": "a100-41gb"})
    assert g.status_code == 422 and g.json()["suggestions"]
    assert g.json()["errors"][0]["field"] == "gpu"
    assert api.get("/v1/gpus/a100-41gb").status_code == 404


def test_bad_bodies_and_queries(api: TestClient) -> None:
    assert api.post("/v1/estimate", content=b"{not json",
                    headers={"content-type": "application/json"}).status_code == 422
    assert api.post("/v1/estimate", json=[1, 2]).status_code == 422
    assert api.get("/v1/estimate?model=llama-3-8b&bogus=1").status_code == 422
    assert api.get("/v1/estimate?model=llama-3-8b&model=7b").status_code == 422
    assert api.get("/v1/estimate?arch=zzzz").status_code == 422
    deep = b"[" * 100_000 + b"]" * 100_000
    r = api.post("/v1/estimate", content=deep, headers={"content-type": "application/json"})
    assert r.status_code in (400, 413, 422)


def test_request_size_limit(api: TestClient) -> None:
    big = {"model": "llama-3-8b", "arch": {"x": "y" * 300_000}}
    r = api.post("/v1/estimate", json=big)
    assert r.status_code == 413 and r.headers["content-type"] == "application/problem+json"

    def chunks():  # no Content-Length: the limit still holds
        for _ in range(40):
            yield b" " * 10_000

    r = api.post("/v1/estimate", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413


def test_a_browser_is_redirected_to_the_permalink(api: TestClient) -> None:
    r = api.get("/v1/estimate?model=Llama+3+8B&seq_len=&gpu=A100+40GB",
                headers={"Accept": "text/html"}, follow_redirects=False)
    assert r.status_code == 303
    assert r.headers["location"] == "/v1/estimate?model=llama-3-8b&gpu=a100-40gb"


def test_empty_form_fields_mean_not_stated(api: TestClient) -> None:
    r = api.get("/v1/estimate?model=llama-3-8b&seq_len=&gpu=a100-40gb&gpu_count=",
                headers={"Accept": "application/json"})
    assert r.status_code == 200
    assert path_of(r.json()["link"]) == "/v1/estimate?model=llama-3-8b&gpu=a100-40gb"


def test_a_body_not_sent_as_json_is_a_415_and_bad_json_names_the_body(api: TestClient) -> None:
    """Review 24: curl -d (form-encoded) had got 'body: Input should be a valid dictionary', and
    malformed JSON a field named after the character where parsing stopped."""
    form = api.post("/v1/estimate", content='{"model": "llama-3-8b"}',
                    headers={"content-type": "application/x-www-form-urlencoded"})
    assert form.status_code == 415 and "Content-Type: application/json" in form.json()["detail"]
    broken = api.post("/v1/estimate", content='{"model": "llama-3-8b",',
                      headers={"content-type": "application/json"})
    assert broken.status_code == 422
    assert broken.json()["errors"][0]["field"] == "body"
    assert broken.json()["errors"][0]["message"].startswith("is not valid JSON")


def test_a_serving_answer_on_given_gpus_has_its_room_at_the_top(api: TestClient) -> None:
    """Review 24: plan.max_concurrent_sequences was null with a GPU count."""
    body = api.post("/v1/estimate", json={"model": "llama-3.1-8b", "task": "infer",
                                          "gpu": "h100-80gb", "gpu_count": 1}).json()
    assert body["plan"]["max_concurrent_sequences"] == body["details"]["max_concurrent_sequences"]
