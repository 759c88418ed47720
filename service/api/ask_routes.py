"""``POST /v1/ask``: a chat question in, the parsed request, the answer and the bot's reply out."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from service.api.deps import ServicesDep, base_url
from service.asking.ask_flow import ask
from service.core.errors import InvalidInput, UnknownName
from service.core.job.request import EstimateRequest
from service.permalink import link, normalise
from service.schemas.problem import PROBLEM_RESPONSES

router = APIRouter(prefix="/v1", tags=["ask"])
REQUEST_FIELDS = frozenset(f.name for f in fields(EstimateRequest))


class AskIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str = Field(min_length=1, max_length=4000, description="the question, as typed in chat",
                      examples=["can I train llama 3 8b on 8 a100 40gb with zero 3?"])
    previous: dict[str, Any] | None = Field(
        None, description="the `parsed` of the answer this message follows up in a thread "
        "(so 'what about seq 8192?' works statelessly), or null", examples=[None])


class AskOut(BaseModel):
    model_config = ConfigDict(extra="allow")
    intent: str = Field(description="train, finetune, infer, time_cost, compare, help or "
                        "invalid", examples=["train"])
    parsed: dict[str, Any] = Field(description="request fields understood, merged over "
                                   "`previous`", examples=[{"model": "llama-3-8b"}])
    answer: dict[str, Any] | None = Field(description="as POST /v1/estimate, or null",
                                          examples=[None])
    reply: str = Field(description="the text the bot posts", examples=["Fits on 8x A100 40GB"])
    clarify: str | None = Field(description="a question back when the text is not enough",
                                examples=[None])
    link: str | None = Field(description="permalink of the parsed request, when it has one",
                             examples=[None])


@router.post("/ask", summary="Answer a chat question", response_model=None,
             responses={200: {"model": AskOut, "description": "The answer"},
                        **PROBLEM_RESPONSES})
async def ask_route(body: AskIn, request: Request, svc: ServicesDep) -> JSONResponse:
    """What the Slack bot calls: parse the text (merged over `previous`), answer it with the
    engine and write the reply. Never an error for odd text: `intent` is `invalid` or `help`
    and `clarify` asks back."""
    result = ask(body.text, body.previous).to_dict()
    permalink = _link(result.get("parsed") or {}, base_url(request, svc))
    result["link"] = permalink
    if isinstance(result.get("answer"), dict) and permalink:
        result["answer"]["link"] = permalink
    return JSONResponse(result)


def _link(parsed: dict[str, Any], base: str) -> str | None:
    stated = {k: v for k, v in parsed.items() if k in REQUEST_FIELDS and v is not None}
    if not stated:
        return None
    try:
        return link(base, normalise(EstimateRequest(**stated)))
    except (InvalidInput, UnknownName, TypeError, ValueError):
        return None
