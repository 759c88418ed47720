"""What a field accepts, in words, for 422 problems ("an integer 1..10,000,000")."""

from __future__ import annotations

from dataclasses import fields

from service.core.job.request import FLOAT_RANGES, INT_RANGES, EstimateRequest
from service.schemas.fields import CHOICES

REQUEST_FIELDS = frozenset(f.name for f in fields(EstimateRequest))

OTHER: dict[str, str] = {
    "model": "a preset id or alias (GET /v1/models), a registered model's id, or a size like 7B",
    "gpu": "a GPU id or alias (GET /v1/gpus)",
    "arch": "our architecture fields or a Hugging Face config.json, as a JSON object",
    "flash_attn": "true or false",
    "sequence_parallel": "true or false",
    "body": "a JSON object",
    "id": "lowercase letters, digits, dots and dashes, e.g. team-llm-7b (3-64 characters)",
    "name": "a display name, 1-200 characters",
    "description": "text, up to 2000 characters",
    "text": "the question, 1-4000 characters",
    "previous": "the `parsed` object of the answer this message follows up, or null",
}


def accepted_for(field: str, error_type: str = "") -> str:
    if error_type == "extra_forbidden":
        return "only the documented fields (see /docs)"
    if field in INT_RANGES:
        low, high = INT_RANGES[field]
        return f"an integer {low}..{high:,}"
    if field in FLOAT_RANGES:
        flow, fhigh = FLOAT_RANGES[field]
        return f"a number {flow:g}..{fhigh:g}"
    if field in CHOICES:
        return ", ".join(CHOICES[field])
    return OTHER.get(field, "see the field's description in /docs")
