"""The bot's typed view of the service's answers (``POST /v1/ask``, a permalink's JSON): only
the fields it shows, validated once when the answer arrives. The service's OpenAPI document
is the contract (``tests/test_bot_contract.py`` checks every field here against it)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class View(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class PerGpuView(View):
    weights: int
    gradients: int
    optimizer: int
    activations: int
    kv_cache: int
    temporary: int
    overhead: int
    total: int


class LayoutView(View):
    gpus: int
    dp: int
    tp: int
    pp: int
    zero_stage: int
    recompute: str
    micro_batch: int
    context: int | None = None


class LayoutFiguresView(View):
    plan: LayoutView
    per_gpu_bytes: PerGpuView
    fits: bool | None


class PlannerView(View):
    mode: str
    fits: bool
    budget_bytes: int
    layout: LayoutFiguresView | None
    stack_name: str = ""


class LaunchView(View):
    """One launch config: a file's content (saved as ``filename``) or a command line."""

    tool: str
    title: str
    filename: str | None
    text: str
    command: str = ""
    notes: list[str] = []


class AnswerView(View):
    model: str
    task: str
    verdict: str
    per_gpu_bytes: PerGpuView
    gpu_usable_bytes: int | None
    fits: bool | None
    plan: LayoutView
    planner: PlannerView | None = None
    launch: dict[str, LaunchView] = {}  # the plan's stack's config first
    link: str | None = None


class AskView(View):
    intent: str
    parsed: dict[str, Any]
    answer: AnswerView | None
    reply: str
    clarify: str | None = None
    link: str | None = None
