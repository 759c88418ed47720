"""The fitcheck service, over HTTP: ``POST /v1/ask`` for questions and ``GET /v1/estimate?...``
(JSON) for pasted permalinks. Short timeouts; every failure is a ``ServiceError`` whose
``status`` says in a few words what happened, for the apology the bot posts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx
from pydantic import ValidationError

from bot.answer_view import AnswerView, AskView
from bot.constants import MAX_QUESTION


class ServiceError(Exception):
    """The service did not answer usefully. ``kind``: ``timeout``, ``unreachable``, ``http``
    (5xx or an unexpected status), ``rejected`` (4xx: the question or link was refused) or
    ``bad_response``; ``status``: what to tell people ("timed out after 8 s", "HTTP 503")."""

    def __init__(self, kind: str, status: str) -> None:
        super().__init__(f"{kind}: {status}")
        self.kind = kind
        self.status = status


@dataclass(frozen=True, slots=True)
class AskResult:
    """The service's answer to one chat question (``POST /v1/ask``), as the bot reads it."""

    intent: str
    parsed: dict[str, Any]
    answer: AnswerView | None
    reply: str
    clarify: str | None
    link: str | None

    @classmethod
    def from_json(cls, data: Any) -> AskResult:
        if not isinstance(data, dict) or not isinstance(data.get("reply"), str):
            raise ServiceError("bad_response", "an answer without a reply")
        try:
            view = AskView.model_validate(data)
        except ValidationError as exc:
            raise ServiceError("bad_response", "an answer the bot cannot read") from exc
        return cls(intent=view.intent, parsed=view.parsed, answer=view.answer,
                   reply=view.reply, clarify=view.clarify, link=view.link)


def read_answer(data: Any) -> AnswerView:
    """A permalink's JSON answer, as the bot reads it."""
    try:
        return AnswerView.model_validate(data)
    except ValidationError as exc:
        raise ServiceError("bad_response", "an answer the bot cannot read") from exc


class ServiceClient:
    """One pooled ``httpx.AsyncClient`` for the bot's lifetime."""

    def __init__(self, base_url: str, timeout_s: float = 8.0,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.timeout_s = timeout_s
        self._http = httpx.AsyncClient(
            base_url=base_url.rstrip("/"), transport=transport,
            timeout=httpx.Timeout(timeout_s, connect=min(2.0, timeout_s)),
            headers={"User-Agent": "fitcheck-bot/0.1", "Accept": "application/json"})

    async def ask(self, text: str, previous: dict[str, Any] | None = None,
                  request_id: str | None = None) -> AskResult:
        body = {"text": text[:MAX_QUESTION] or "help", "previous": previous}
        data = await self._call("POST", "/v1/ask", request_id, json=body)
        return AskResult.from_json(data)

    async def permalink(self, query: str, request_id: str | None = None) -> AnswerView:
        """The answer behind a permalink's query string (``model=...&gpu=...``)."""
        return read_answer(await self._call("GET", f"/v1/estimate?{query}", request_id))

    async def _call(self, method: str, path: str, request_id: str | None, **kw: Any) -> Any:
        headers = {"X-Request-ID": request_id} if request_id else {}
        try:
            response = await self._http.request(method, path, headers=headers, **kw)
        except httpx.TimeoutException as exc:
            raise ServiceError("timeout", f"timed out after {self.timeout_s:g} s") from exc
        except httpx.HTTPError as exc:
            raise ServiceError("unreachable", "could not be reached") from exc
        if response.status_code >= 500:
            retry = response.headers.get("Retry-After")
            hint = f", retry after {retry} s" if retry and retry.isdigit() else ""
            raise ServiceError("http", f"HTTP {response.status_code} "
                               f"{response.reason_phrase or 'error'}{hint}".replace(" ,", ","))
        if response.status_code >= 400:
            raise ServiceError("rejected", _problem_detail(response))
        try:
            return response.json()
        except ValueError as exc:
            raise ServiceError("bad_response", "an answer that is not JSON") from exc

    async def close(self) -> None:
        await self._http.aclose()


def _problem_detail(response: httpx.Response) -> str:
    """The first words of a problem+json body (422 names the bad fields), else the status."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict):
        errors = body.get("errors")
        if isinstance(errors, list) and errors and isinstance(errors[0], dict):
            first = errors[0]
            return f"{first.get('field', 'request')}: {first.get('message', 'not accepted')}"
        detail = body.get("detail") or body.get("title")
        if isinstance(detail, str):
            return detail[:200]
    return f"HTTP {response.status_code}"
