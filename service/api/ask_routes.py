"""``POST /v1/ask``: a chat question in, the parsed request, the answer and the bot's reply out."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field

from service.answer_json import ask_bytes
from service.api.deps import ServicesDep, base_url
from service.asking.ask_flow import Asker
from service.asking.ask_types import AskAnswer
from service.render.slack_reply import plain
from service.schemas.problem import PROBLEM_RESPONSES

router = APIRouter(prefix="/v1", tags=["ask"])
PARSED_CHARS = 2_000  # the longest question read; the rest is left out, and the reply says so


class AskIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str = Field(min_length=1, max_length=4000, description="the question, as typed in "
                      "chat; past 2,000 characters only the first 2,000 are read (the reply "
                      "says so)",
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
    text, note = cut_question(body.text)
    result = await asker.ask(text, body.previous)
    if note is not None:
        result = replace(result, notes=[*(result.notes or []), note],
                         reply=f"{result.reply}\n{plain(note)}")
    return Response(ask_bytes(result), media_type="application/json")


def cut_question(text: str) -> tuple[str, str | None]:
    """A question longer than PARSED_CHARS is read up to the last word that fits; the note
    says so (parsing costs time in proportion to the text, on the event loop)."""
    if len(text) <= PARSED_CHARS:
        return text, None
    head = text[:PARSED_CHARS]
    words = head.rsplit(None, 1)
    kept = words[0] if len(words) == 2 and not text[PARSED_CHARS].isspace() else head
    return kept, (f"I read only the first {len(kept):,} of your {len(text):,} characters: "
                  "put the model, the GPUs and the settings first.")
