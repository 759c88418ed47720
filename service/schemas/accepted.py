"""What a field accepts, in words, for 422 problems ("an integer 1..65,536: why"), and the
message for a number outside its range or not a number at all."""

from __future__ import annotations

import math
from dataclasses import fields
from typing import Any

from service.core.job.request import EstimateRequest
from service.permalink import short_float
from service.schemas.fields import CHOICES
from service.schemas.size_limits import TOKENS_PER_PASS, accepted_range, float_range, int_range

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
    if error_type == "tokens_per_pass":
        return (f"micro_batch x seq_len at most {TOKENS_PER_PASS:,} tokens "
                "(one GPU's pass holds no more than the longest accepted sequence)")
    numeric = accepted_range(field)
    if numeric is not None:
        return numeric
    if field in CHOICES:
        return ", ".join(CHOICES[field])
    return OTHER.get(field, "see the field's description in /docs")


_NUMBER_ERRORS = frozenset({"int_parsing", "int_type", "int_from_float", "float_parsing",
                            "float_type", "greater_than_equal", "less_than_equal", "finite_number"})


def number_message(field: str, error_type: str, given: Any) -> str | None:
    """'1e12 is out of range' for a size given as a number of any spelling (1e12, 4096.0);
    None when the field has no range or the error is not about the number."""
    if error_type not in _NUMBER_ERRORS or isinstance(given, bool):
        return None
    limits = int_range(field) or float_range(field)
    if limits is None:
        return None
    try:
        value = float(str(given).strip())
    except ValueError:
        return f"{str(given)[:40]!r} is not a number"
    if math.isnan(value):
        return "is not a number"
    text = str(given).strip()[:40]
    if not limits[0] <= value <= limits[1]:
        if isinstance(given, float) and math.isfinite(value):
            text = short_float(value)
        return f"{text} is out of range"
    if int_range(field) is not None and not value.is_integer():
        return f"{text} is not a whole number"
    return f"{text} must be written as a whole number" if int_range(field) else None
