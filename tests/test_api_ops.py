"""Operations endpoints, metrics, JSON logs with request ids, the OpenAPI document."""

from __future__ import annotations

import json

from api_support import TRAIN, client

from service.store.breaker import CircuitBreaker


def test_health_ready_metrics() -> None:
    with client() as api:
        assert api.get("/healthz").json() == {"status": "ok"}
        ready = api.get("/readyz")
        assert ready.status_code == 200 and ready.json()["store"] == "embedded"
        api.post("/v1/estimate", json=TRAIN)
        api.post("/v1/estimate", json=TRAIN)
        text = api.get("/metrics").text
        for name in ('fitcheck_http_request_duration_seconds_count{method="POST",'
                     'route="/v1/estimate",status="200"} 2.0', "fitcheck_estimate_seconds_count",
                     "fitcheck_planner_seconds_count", "fitcheck_cache_hits_total 1.0",
                     "fitcheck_cache_misses_total 1.0", "fitcheck_redis_errors_total"):
            assert name in text


def test_json_logs_carry_the_request_id(capfd: object) -> None:
    with client() as api:
        r = api.get("/healthz", headers={"X-Request-ID": "ticket-42"})
        assert r.headers["x-request-id"] == "ticket-42"
        generated = api.get("/healthz").headers["x-request-id"]
        assert len(generated) == 32
    err = capfd.readouterr().err  # type: ignore[attr-defined]
    lines = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    mine = [e for e in lines if e.get("request_id") == "ticket-42"]
    assert mine and mine[0]["route"] == "/healthz" and mine[0]["status"] == 200


def test_openapi_documents_every_request_field() -> None:
    with client() as api:
        doc = api.get("/openapi.json").json()
    schema = doc["components"]["schemas"]["EstimateRequest"]["properties"]
    assert len(schema) > 40
    for name, prop in schema.items():
        assert prop.get("description"), name
        assert prop.get("examples"), name
    params = doc["paths"]["/v1/estimate"]["get"]["parameters"]
    assert {p["name"] for p in params} == set(schema)
    assert all(p["description"] and "example" in p for p in params)
    for path in ("/v1/models", "/v1/models/{model_id}", "/v1/gpus", "/healthz", "/readyz",
                 "/metrics"):
        assert path in doc["paths"]
    problem = doc["paths"]["/v1/estimate"]["post"]["responses"]["422"]["content"]
    assert list(problem) == ["application/problem+json"]


def test_unknown_routes_and_methods_are_problems() -> None:
    with client() as api:
        r = api.get("/v2/nothing")
        assert r.status_code == 404 and r.headers["content-type"] == "application/problem+json"
        assert api.delete("/v1/models").status_code == 405


def test_circuit_breaker() -> None:
    now = [0.0]
    breaker = CircuitBreaker(2.0, clock=lambda: now[0])
    assert breaker.allow()
    breaker.failure()
    assert not breaker.allow() and breaker.retry_after() == 2.0
    now[0] = 2.5
    assert breaker.allow()  # the trial call
    assert not breaker.allow()  # everyone else still fails fast
    breaker.success()
    assert breaker.allow() and not breaker.is_open
