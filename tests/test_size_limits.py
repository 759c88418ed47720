"""Sanity limits on sizes: each with its reason, within the engine's own ranges, applied to the
JSON body and the permalink's query alike, and a 422 that names the field and the accepted range
(seq_len 1e12 says the range, not "should be a valid integer")."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from api_support import client
from fastapi.testclient import TestClient

from service.core.job.request import FLOAT_RANGES, INT_RANGES
from service.core.model.presets import lookup_preset
from service.schemas.accepted import number_message
from service.schemas.size_limits import (
    CONTEXT_FACTOR,
    LIMITS,
    LONGEST_CONTEXT,
    SANITY,
    TOKENS_PER_PASS,
    accepted_range,
    int_range,
)

JSON = {"Accept": "application/json"}


@pytest.fixture(scope="module")
def api() -> Iterator[TestClient]:
    with client() as c:
        yield c


def test_every_limit_has_its_reason_and_sits_inside_the_engines_range() -> None:
    for name, limit in LIMITS.items():
        assert len(limit.reason) > 20, name
        engine = INT_RANGES.get(name) or FLOAT_RANGES[name]
        assert engine[0] <= limit.low <= limit.high <= engine[1], name
        assert limit.high <= SANITY[name].high, name


def test_the_longest_context_comes_from_a_preset() -> None:
    assert lookup_preset(LONGEST_CONTEXT.model) is not None
    assert SANITY["seq_len"].high == CONTEXT_FACTOR * LONGEST_CONTEXT.tokens
    assert LIMITS["seq_len"].high == min(SANITY["seq_len"].high, INT_RANGES["seq_len"][1])
    assert LIMITS["seq_len"].high == TOKENS_PER_PASS
    assert LONGEST_CONTEXT.model in LIMITS["seq_len"].reason


def _errors(response: Any) -> dict[str, dict[str, str]]:
    assert response.status_code == 422, response.text
    assert response.headers["content-type"] == "application/problem+json"
    return {e["field"]: e for e in response.json()["errors"]}


@pytest.mark.parametrize("body", [{"seq_len": 1e12}, {"seq_len": 10**12}])
def test_seq_len_1e12_says_the_accepted_range(api: TestClient, body: dict[str, Any]) -> None:
    error = _errors(api.post("/v1/estimate", json={"model": "llama-3-8b", **body}))["seq_len"]
    assert error["message"] == ("1e12 is out of range" if isinstance(body["seq_len"], float)
                                else "1000000000000 is out of range")
    assert error["accepted"] == accepted_range("seq_len")
    assert error["accepted"].startswith("an integer 1..10,000,000: 8x the longest context")
    query = _errors(api.get("/v1/estimate?model=llama-3-8b&seq_len=1e12", headers=JSON))
    assert query["seq_len"]["message"] == "1e12 is out of range"


def test_the_issues_absurd_job_is_refused(api: TestClient) -> None:
    errors = _errors(api.post("/v1/estimate", json={"model": "llama-3-8b", "seq_len": 10_000_000,
                                                     "micro_batch": 100_000}))
    assert set(errors) == {"micro_batch"}
    assert errors["micro_batch"]["accepted"].startswith("an integer 1..65,536: sequences in one")


def test_tokens_in_one_pass_are_limited(api: TestClient) -> None:
    errors = _errors(api.post("/v1/estimate", json={"model": "llama-3-8b", "seq_len": 1_000_000,
                                                     "micro_batch": 64}))
    assert "64,000,000 tokens in one GPU's pass" in errors["micro_batch"]["message"]
    assert f"at most {TOKENS_PER_PASS:,} tokens" in errors["micro_batch"]["accepted"]
    fine = api.post("/v1/estimate", json={"model": "llama-3-8b", "seq_len": 1_000_000,
                                          "micro_batch": 10})
    assert fine.status_code == 200


@pytest.mark.parametrize(("field", "value", "words"), [
    ("gpu_count", 2_000_000, "largest GPU clusters"),
    ("global_batch", 20_000_000, "optimizer step"),
    ("concurrent", 5_000_000, "served together"),
    ("nodes", 200_000, "servers of 8 GPUs"),
    ("tokens", 1e17, "training runs"),
])
def test_sizes_past_any_cluster_name_the_field_range_and_reason(
        api: TestClient, field: str, value: float, words: str) -> None:
    errors = _errors(api.post("/v1/estimate", json={"model": "llama-3-8b", field: value}))
    assert words in errors[field]["accepted"] and "out of range" in errors[field]["message"]
    query = _errors(api.get(f"/v1/estimate?model=llama-3-8b&{field}={value}", headers=JSON))
    assert query[field]["accepted"] == errors[field]["accepted"]


def test_the_largest_accepted_sizes_answer(api: TestClient) -> None:
    high = int_range("seq_len")
    assert high is not None
    r = api.post("/v1/estimate", json={"model": "llama-3-8b", "seq_len": high[1]})
    assert r.status_code == 200
    over = api.post("/v1/estimate", json={"model": "llama-3-8b", "seq_len": high[1] + 1})
    assert over.status_code == 422


def test_the_openapi_document_states_the_limits(api: TestClient) -> None:
    schema = api.get("/openapi.json").json()["components"]["schemas"]["EstimateRequest"]
    seq_len = schema["properties"]["seq_len"]
    bounds = next(v for v in seq_len["anyOf"] if v.get("type") == "integer")
    assert bounds["maximum"] == LIMITS["seq_len"].high
    assert "Accepted: an integer 1..10,000,000" in seq_len["description"]


def test_number_messages() -> None:
    assert number_message("seq_len", "int_type", 4096.0) == "4096.0 must be written as a whole number"
    assert number_message("seq_len", "int_parsing", "12.5") == "12.5 is not a whole number"
    assert number_message("seq_len", "int_parsing", "abc") == "'abc' is not a number"
    assert number_message("seq_len", "int_parsing", "-3") == "-3 is out of range"
    assert number_message("tokens", "less_than_equal", 1e20) == "1e20 is out of range"
    assert number_message("model", "string_type", 3) is None
    assert number_message("seq_len", "missing", None) is None
    assert number_message("seq_len", "int_type", True) is None
