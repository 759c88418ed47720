"""Pydantic models of the estimate request (JSON body and permalink query), generated from the
core's ``EstimateRequest`` and ``fields.DOCS``, and of the answer (for the OpenAPI document)."""

from __future__ import annotations

from dataclasses import fields
from typing import Any, Literal, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, create_model

from service.core.job.request import FLOAT_RANGES, INT_RANGES, EstimateRequest
from service.permalink import encode_arch
from service.schemas.fields import CHOICES, DOCS

MAX_NAME = 200
ARCH_EXAMPLE = encode_arch(DOCS["arch"][1])
ARCH_QUERY = ("The architecture, compact: `z` + base64url(zlib(JSON)), as in the `link` of an "
              "answer.")


def _field(name: str, kind: Any, query: bool) -> tuple[Any, Any]:
    description, example = DOCS[name]
    extra: dict[str, Any] = {}
    if name in INT_RANGES:
        low, high = INT_RANGES[name]
        kind, extra = int, {"ge": low, "le": high}
    elif name in FLOAT_RANGES:
        flow, fhigh = FLOAT_RANGES[name]
        kind, extra = float, {"ge": flow, "le": fhigh, "allow_inf_nan": False}
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
    model: type[BaseModel] = create_model(title, __config__=config, **definitions)  # type: ignore[call-overload]
    return model


EstimateIn = _model("EstimateRequest", query=False)
EstimateQuery = _model("EstimateQuery", query=True)


class PerGpuBytes(BaseModel):
    """Memory of one GPU by component, integer bytes."""

    model_config = ConfigDict(extra="allow")
    weights: int = Field(description="model weights on one GPU", examples=[16060522496])
    gradients: int = Field(description="gradients on one GPU", examples=[16060522496])
    optimizer: int = Field(description="optimizer state (and fp32 master weights)",
                           examples=[96363134976])
    activations: int = Field(description="activations kept for backward (forward workspace "
                             "when serving)", examples=[32318242816])
    kv_cache: int = Field(description="KV cache (serving)", examples=[0])
    temporary: int = Field(description="temporary buffers at the peak", examples=[5253365760])
    overhead: int = Field(description="CUDA context, NCCL, allocator reserve",
                          examples=[8839660339])
    total: int = Field(description="the sum: peak memory of one GPU", examples=[174895448883])


class Formula(BaseModel):
    model_config = ConfigDict(extra="allow")
    component: str = Field(description="which component", examples=["weights"])
    bytes: int = Field(description="its bytes on one GPU", examples=[16060522496])
    formula: str = Field(description="the rule, symbolically", examples=["P x 2 B / shards"])
    values: str = Field(description="the rule with the numbers put in",
                        examples=["8,030,261,248 x 2 B"])
    source: str = Field(description="paper or framework file the rule follows",
                        examples=["ZeRO (Rajbhandari et al. 2020)"])


class EstimateOut(BaseModel):
    """The answer to an estimate; more keys (details, planner, fits_on, ...) may be present."""

    model_config = ConfigDict(extra="allow")
    model: str = Field(description="the model's id", examples=["llama-3-8b"])
    task: str = Field(description="train, finetune or infer", examples=["train"])
    params_total: int = Field(description="parameters in total", examples=[8030261248])
    params_active: int = Field(description="parameters used per token (MoE: fewer)",
                               examples=[8030261248])
    per_gpu_bytes: PerGpuBytes = Field(description="memory of one GPU by component")
    gpu: str | None = Field(description="GPU id, or null when none was given",
                            examples=["a100-40gb"])
    fits: bool | None = Field(description="whether it fits (null: no GPU given)",
                              examples=[True])
    min_gpus: int | None = Field(description="fewest GPUs of this type that fit (planner)",
                                 examples=[4])
    plan: dict[str, Any] = Field(description="the layout: gpus, dp, tp, pp, cp, zero_stage, "
                                 "recompute, micro_batch, ...",
                                 examples=[{"gpus": 4, "dp": 2, "tp": 2, "pp": 1, "cp": 1,
                                            "zero_stage": 3, "recompute": "full",
                                            "micro_batch": 1}])
    compute: dict[str, Any] | None = Field(description="FLOPs, time, gpu_hours and cost when "
                                           "tokens are given", examples=[None])
    verdict: str = Field(description="the answer in one line",
                         examples=["Fits on 4x NVIDIA A100 40GB SXM with ZeRO-3 + TP=2"])
    assumptions: list[str] = Field(description="every default the request did not state",
                                   examples=[["sequence length 4096 tokens"]])
    formulas: list[Formula] = Field(description="formula, numbers and source of each "
                                    "component")
    link: str = Field(description="permalink: the whole request as a GET URL (HTML report in "
                      "a browser, this JSON with Accept: application/json)",
                      examples=["http://127.0.0.1:8000/v1/estimate?model=llama-3-8b&gpu=a100-40gb"])
