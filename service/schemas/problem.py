"""The problem details body (RFC 9457) as documented in the OpenAPI schema."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class FieldError(BaseModel):
    field: str = Field(description="the bad field, dotted when nested", examples=["seq_len"])
    message: str = Field(description="what is wrong", examples=["Input should be greater than "
                                                                "or equal to 1"])
    accepted: str = Field(description="what the field accepts",
                          examples=["an integer 1..10,000,000"])


class Problem(BaseModel):
    """``application/problem+json``: type, title, status, detail; more members by kind."""

    model_config = ConfigDict(extra="allow")
    type: str = Field(description="a URI naming the kind of problem",
                      examples=["https://fitcheck.dev/problems/invalid-input"])
    title: str = Field(description="short, the same for every problem of this kind",
                       examples=["Invalid input"])
    status: int = Field(description="the HTTP status", examples=[422])
    detail: str = Field(description="this occurrence, in words", examples=["bad field(s): tp"])
    instance: str | None = Field(None, description="the request path", examples=["/v1/estimate"])
    request_id: str | None = Field(None, description="the request id (also in X-Request-ID)",
                                   examples=["4f1c0a3e9b7d4e2f"])
    errors: list[FieldError] | None = Field(None, description="422: every bad field")
    suggestions: list[str] | None = Field(None, description="404: the closest names",
                                          examples=[["llama-3-8b"]])


def _problem(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/problem+json": {
        "schema": {"$ref": "#/components/schemas/Problem"}}}}


PROBLEM_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: _problem("The body cannot be read (not UTF-8 JSON)"),
    404: _problem("Unknown model or GPU, with the closest names"),
    413: _problem("Request body too large"),
    415: _problem("The body was not sent as JSON (Content-Type: application/json)"),
    422: _problem("Invalid input: every bad field and what it accepts"),
    503: _problem("A registered model was asked for while the registry (Redis) is down"),
}
