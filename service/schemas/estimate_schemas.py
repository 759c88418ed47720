"""Pydantic models of the estimate request (JSON body and permalink query), generated from the
core's ``EstimateRequest`` and ``fields.DOCS``. The answer's schema comes from the core's answer
dataclasses (``service.answer_json``)."""

from __future__ import annotations

from dataclasses import fields
from typing import Any, Literal, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, create_model, field_validator
from pydantic_core import PydanticCustomError

from service.core.job.request import EstimateRequest
from service.permalink import encode_arch
from service.schemas.fields import CHOICES, DOCS
from service.schemas.size_limits import (
    LIMITS,
    accepted_range,
    float_range,
    int_range,
    tokens_per_pass_problem,
)

MAX_NAME = 200
ARCH_EXAMPLE = encode_arch(DOCS["arch"][1])
ARCH_QUERY = ("The architecture, compact: `z` + base64url(zlib(JSON)), as in the `link` of an "
              "answer.")


def _field(name: str, kind: Any, query: bool) -> tuple[Any, Any]:
    description, example = DOCS[name]
    extra: dict[str, Any] = {}
    ints, floats = int_range(name), float_range(name)
    if name in LIMITS:
        description += f" Accepted: {accepted_range(name)}."
    if ints is not None:
        kind, extra = int, {"ge": ints[0], "le": ints[1]}
    elif floats is not None:
        kind, extra = float, {"ge": floats[0], "le": floats[1], "allow_inf_nan": False}
    elif name in CHOICES:
        kind = Literal[CHOICES[name]]
    elif name == "arch":
        if query:
            kind, description, example = str, ARCH_QUERY, ARCH_EXAMPLE
            extra = {"max_length": 65_536}
        else:
            kind = dict[str, Any]
    elif kind is str or kind == (str | None):
        kind, extra = str, {"min_length": 1, "max_length": MAX_NAME}
    elif kind == (bool | None):
        kind = bool
    if not query and kind in (int, float, bool):
        extra["strict"] = True  # JSON: true is not 1, "8" is not 8 (query strings are text)
    return (kind | None, Field(None, description=description, examples=[example], **extra))


def _model(title: str, query: bool) -> type[BaseModel]:
    hints = get_type_hints(EstimateRequest)
    definitions = {f.name: _field(f.name, hints[f.name], query) for f in fields(EstimateRequest)}
    config = ConfigDict(extra="forbid", title=title, json_schema_extra={
        "examples": [{"model": "llama-3-8b", "seq_len": 4096, "zero_stage": 3,
                      "gpu": "a100-40gb"}]})
    model: type[BaseModel] = create_model(  # type: ignore[call-overload]
        title, __config__=config, __validators__={"tokens_per_pass": _tokens_per_pass},
        **definitions)
    return model


def _check_tokens_per_pass(micro_batch: int | None, info: ValidationInfo) -> int | None:
    """seq_len x micro_batch: the tokens one GPU holds in a pass (see ``size_limits``)."""
    problem = tokens_per_pass_problem(info.data.get("seq_len"), micro_batch)
    if problem is not None:
        raise PydanticCustomError("tokens_per_pass", problem)
    return micro_batch


_tokens_per_pass = field_validator("micro_batch")(_check_tokens_per_pass)


EstimateIn = _model("EstimateRequest", query=False)
EstimateQuery = _model("EstimateQuery", query=True)
