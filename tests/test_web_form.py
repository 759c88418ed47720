"""The home form, and what a browser gets back on every outcome of submitting it: the report
(by way of the permalink), or the form again, filled in, with each problem next to its field and
the closest names as links, with a 4xx status (503 while the registry is down). API clients
asking the same URL still get problem+json."""

from __future__ import annotations

import re
from collections.abc import Iterator
from html import unescape
from urllib.parse import parse_qs, urlsplit

import pytest
from api_support import client, free_port
from fastapi.testclient import TestClient

from service.schemas.size_limits import int_range

BROWSER = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}


@pytest.fixture(scope="module")
def api() -> Iterator[TestClient]:
    with client() as c:
        yield c


def _control(page: str, name: str) -> str:
    found = re.search(rf"<select id=field-{name} .*?</select>|<input id=field-{name} [^>]*>",
                      page, re.S)
    assert found is not None, name
    return found.group(0)


def _error(page: str, name: str) -> str:
    found = re.search(rf"<span class=error id=error-{name}>(.*?)</span>", page, re.S)
    assert found is not None, name
    return unescape(re.sub(r"<[^>]+>", "", found.group(1)))


def test_the_form_covers_the_job(api: TestClient) -> None:
    page = api.get("/").text
    for name in ("model", "task", "finetune_method", "precision", "quantization",
                 "kv_cache_dtype", "seq_len", "concurrent", "gpu", "gpu_count", "micro_batch",
                 "global_batch", "zero_stage", "recompute", "lora_rank", "tokens"):
        assert "aria-invalid" not in _control(page, name), name
    for label in ("Serving (inference)", "QLoRA (4-bit base)", "bf16 mixed (fp32 master weights)",
                  "AWQ 4-bit", "gguf q4_k_m (4.85 bits per weight)", "fp8", "ZeRO-3",
                  "default: 16-bit", "the fewest that fit"):
        assert label in unescape(page), label
    assert f"max={int_range('seq_len')[1]}" in _control(page, "seq_len")  # type: ignore[index]
    assert "<datalist id=models>" in page and "<datalist id=gpus>" in page
    assert "src=" not in page and "class=problems" not in page


def test_a_typo_gets_the_form_back_with_links_to_the_closest_names(api: TestClient) -> None:
    r = api.get("/v1/estimate?model=mistrall-large-2&task=infer&seq_len=32768&gpu=h100-80gb"
                "&gpu_count=",
                headers=BROWSER)
    assert r.status_code == 422 and r.headers["content-type"].startswith("text/html")
    assert "value='mistrall-large-2'" in _control(r.text, "model")
    assert "aria-invalid=true" in _control(r.text, "model")
    assert "<option value='infer' selected>" in _control(r.text, "task")
    assert "value='32768'" in _control(r.text, "seq_len")
    assert "Did you mean mistral-large-2" in _error(r.text, "model")
    links = [unescape(h) for h in re.findall(r"<a href='(/v1/estimate\?[^']+)'>mistral-large-2<",
                                             r.text)]
    assert links
    query = parse_qs(urlsplit(links[0]).query)
    assert query == {"model": ["mistral-large-2"], "task": ["infer"], "seq_len": ["32768"],
                     "gpu": ["h100-80gb"]}
    followed = api.get(links[0], headers=BROWSER)
    assert followed.status_code == 200 and "id=verdict" in followed.text


def test_a_bad_value_is_named_next_to_its_field(api: TestClient) -> None:
    r = api.get("/v1/estimate?model=llama-3-8b&seq_len=1e12&micro_batch=0&gpu=a100-40gb",
                headers=BROWSER)
    assert r.status_code == 422 and r.headers["content-type"].startswith("text/html")
    assert _error(r.text, "seq_len").startswith("1e12 is out of range. Accepted: an integer "
                                                "1..10,000,000: 8x the longest context")
    assert "0 is out of range" in _error(r.text, "micro_batch")
    assert "value='1e12'" in _control(r.text, "seq_len")
    assert "value='a100-40gb'" in _control(r.text, "gpu")
    summary = unescape(re.search(r"<div class=problems.*?</div>", r.text, re.S).group(0))  # type: ignore[union-attr]
    assert "<a href='#field-seq_len'>" in summary and "<a href='#field-micro_batch'>" in summary


def test_every_problem_at_once(api: TestClient) -> None:
    r = api.get("/v1/estimate?model=llama-3-9b&seq_len=-1&gpu=a100-41gb", headers=BROWSER)
    assert r.status_code == 422
    assert "out of range" in _error(r.text, "seq_len")
    assert "unknown model 'llama-3-9b'" in _error(r.text, "model")
    assert "unknown gpu 'a100-41gb'" in _error(r.text, "gpu")


def test_a_value_the_select_does_not_offer_is_kept(api: TestClient) -> None:
    r = api.get("/v1/estimate?model=llama-3-8b&quantization=awq5", headers=BROWSER)
    assert r.status_code == 422
    assert "<option value='awq5' selected>awq5</option>" in _control(r.text, "quantization")
    assert "awq" in _error(r.text, "quantization")


def test_an_engine_error_on_a_setting_without_a_field(api: TestClient) -> None:
    r = api.get("/v1/estimate?model=llama-3-8b&tp=3&gpu=h100-80gb&gpu_count=3",
                headers=BROWSER)
    assert r.status_code == 422
    assert "More settings from the link" in r.text
    assert "value='3'" in _control(r.text, "tp")
    assert "does not divide" in _error(r.text, "tp")


def test_api_clients_still_get_problem_json(api: TestClient) -> None:
    for headers in ({"Accept": "application/json"}, {}, {"Accept": "*/*"}):
        r = api.get("/v1/estimate?model=llama-3-8b&seq_len=1e12", headers=headers)
        assert r.status_code == 422
        assert r.headers["content-type"] == "application/problem+json"
        assert r.json()["errors"][0]["field"] == "seq_len"
        typo = api.get("/v1/estimate?model=mistrall-large-2", headers=headers)
        assert typo.status_code == 422 and "mistral-large-2" in typo.json()["suggestions"]


def test_the_form_leads_to_the_report(api: TestClient) -> None:
    r = api.get("/v1/estimate?model=Llama+3+8B&task=&precision=&seq_len=4096&gpu=A100+40GB"
                "&gpu_count=", headers=BROWSER, follow_redirects=False)
    assert r.status_code == 303
    assert r.headers["location"] == "/v1/estimate?model=llama-3-8b&seq_len=4096&gpu=a100-40gb"


def test_registry_down_is_a_page_too() -> None:
    with client(redis_url=f"redis://127.0.0.1:{free_port()}/0", redis_timeout_s=0.05) as api:
        r = api.get("/v1/estimate?model=team-llm-8b&gpu=a100-40gb", headers=BROWSER)
        assert r.status_code == 503 and r.headers["retry-after"]
        assert r.headers["content-type"].startswith("text/html")
        assert "value='team-llm-8b'" in _control(r.text, "model")
        assert "registry (Redis) is unreachable" in r.text


def test_a_bug_keeps_the_form(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(answer: object) -> str:
        raise RuntimeError("a bug in the report")

    monkeypatch.setattr("service.api.estimate_page.render_report", broken)
    with client() as api:
        r = api.get("/v1/estimate?model=llama-3-8b&gpu=a100-40gb", headers=BROWSER)
        assert r.status_code == 500 and r.headers["content-type"].startswith("text/html")
        assert "value='llama-3-8b'" in _control(r.text, "model")
        assert "it has been logged" in r.text


def test_what_was_typed_is_escaped(api: TestClient) -> None:
    r = api.get("/v1/estimate?model=%3Cscript%3Ealert(1)%3C/script%3E&x%27%3E%3Cb%3E=1",
                headers=BROWSER)
    assert r.status_code == 422
    assert "<script>alert" not in r.text and "<b>" not in r.text
    assert "value='&lt;script&gt;alert(1)&lt;/script&gt;'" in _control(r.text, "model")
