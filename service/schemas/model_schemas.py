"""Models: registering one (``POST /v1/models``) and listing them."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

ID_PATTERN = r"^[a-z0-9]+(?:[.-][a-z0-9]+)*$"


class ModelIn(BaseModel):
    """A team's model: an id and its architecture (ours, or a pasted Hugging Face config.json)."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{
        "id": "team-llm-8b", "name": "Team LLM 8B",
        "arch": {"layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 8, "ffn": 14336,
                 "vocab": 128256}}]})
    id: str = Field(min_length=3, max_length=64, pattern=ID_PATTERN,
                    description="lowercase, dashed, permanent; use it as `model` in estimates",
                    examples=["team-llm-8b"])
    name: str | None = Field(None, min_length=1, max_length=200,
                             description="display name (default: the id)",
                             examples=["Team LLM 8B"])
    description: str | None = Field(None, max_length=2000, description="free text",
                                    examples=["our 8B base model, Llama-3-like with 16 layers"])
    arch: dict[str, Any] = Field(
        description="our architecture fields (layers, hidden, heads, kv_heads, ffn, vocab, mlp, "
        "tied_embeddings, moe, mla, ...) or a Hugging Face config.json as is",
        examples=[{"layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 8, "ffn": 14336,
                   "vocab": 128256}])


class ModelOut(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str = Field(description="the id to use as `model`", examples=["llama-3-8b"])
    name: str = Field(description="display name", examples=["Llama 3 8B"])
    source: str = Field(description="preset (built in) or registered", examples=["preset"])
    family: str = Field(description="preset file, or `registered`", examples=["llama"])
    hf_repo: str | None = Field(description="Hugging Face repo id", examples=[
        "meta-llama/Meta-Llama-3-8B"])
    aliases: list[str] = Field(description="other names it answers to", examples=[["llama3-8b"]])
    params_total: int = Field(description="parameters, counted from the architecture",
                              examples=[8030261248])
    params_active: int = Field(description="parameters used per token (MoE: fewer)",
                               examples=[8030261248])
    published_params: int | None = Field(description="the authors' published count (presets)",
                                         examples=[8030261248])


class ModelDetail(ModelOut):
    arch: dict[str, Any] = Field(description="the architecture, our fields",
                                 examples=[{"layers": 32, "hidden": 4096}])


class ModelList(BaseModel):
    models: list[ModelOut] = Field(description="built-in presets, then registered models")
    registry: str = Field(description="up (Redis answered), down (registered models from this "
                          "replica's memory only) or embedded (no Redis configured)",
                          examples=["up"])
