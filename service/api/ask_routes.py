"""``POST /v1/ask``: a chat question in, the parsed request, the answer and the bot's reply out."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field

from service.answer_json import ask_bytes
from service.api.deps import ServicesDep, base_url
from service.asking.ask_flow import Asker
from service.asking.ask_types import AskAnswer
from service.schemas.problem import PROBLEM_RESPONSES

router = APIRouter(prefix="/v1", tags=["ask"])


class AskIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str = Field(min_length=1, max_length=4000, description="the question, as typed in chat",
                      examples=["can I train llama 3 8b on 8 a100 40gb with zero 3?"])
    previous: dict[str, Any] | None = Field(
        None, description="the `parsed` of the answer this message follows up in a thread "
        "(so 'what about seq 8192?' works statelessly), or null", examples=[None])


@router.post("/ask", summary="Answer a chat question", response_model=None,
             responses={200: {"model": AskAnswer, "description": "The answer"},
                        **PROBLEM_RESPONSES})
async def ask_route(body: AskIn, request: Request, svc: ServicesDep) -> Response:
    """What the Slack bot calls: parse the text (merged over `previous`), answer it on the same
    road as `POST /v1/estimate` (registered models, caches) and write the reply. Never an error
    for odd text: `intent` is `invalid` or `help` and `clarify` asks back."""
    asker = Asker(svc.estimates, base_url(request, svc))
    result = await asker.ask(body.text, body.previous)
    return Response(ask_bytes(result), media_type="application/json")
