"""Route dependencies: the shared services, the writer's API key, content negotiation."""

from __future__ import annotations

import hmac
from typing import Annotated

from fastapi import Depends, Request

from service.api.problems import ApiProblem
from service.services import Services


async def services(request: Request) -> Services:
    """Async on purpose: a plain ``def`` dependency costs a thread-pool hop per request."""
    found: Services | None = getattr(request.app.state, "services", None)
    if found is None:  # the app runs without its lifespan (some test clients)
        found = Services.open(request.app.state.settings, request.app.state.metrics)
        request.app.state.services = found
    return found


ServicesDep = Annotated[Services, Depends(services)]


def require_writer(request: Request, svc: ServicesDep) -> None:
    """Writes need the API key when ``FITCHECK_API_KEY`` is set (the OpenAPI document declares
    the security schemes only then: see ``app._openapi``)."""
    expected = svc.settings.api_key
    if not expected:
        return
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    given = request.headers.get("x-api-key") or (token.strip() if scheme.lower() == "bearer"
                                                 else "")
    if not hmac.compare_digest(given.encode(), expected.encode()):
        raise ApiProblem(401, "Unauthorized", "registering a model needs the API key: "
                         "`Authorization: Bearer <key>` or `X-API-Key: <key>`", "unauthorized",
                         headers={"WWW-Authenticate": "Bearer"})


def base_url(request: Request, svc: Services) -> str:
    return svc.settings.public_url or str(request.base_url)


def wants_html(accept: str | None) -> bool:
    """True when the client prefers text/html over JSON (browsers); ``*/*`` gets JSON."""
    html = json_q = 0.0
    for part in (accept or "").split(","):
        media, _, params = part.strip().partition(";")
        q = 1.0
        for param in params.split(";"):
            name, _, value = param.strip().partition("=")
            if name == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        media = media.strip().lower()
        if media in ("text/html", "application/xhtml+xml"):
            html = max(html, q)
        elif media in ("application/json", "application/problem+json"):
            json_q = max(json_q, q)
    return html > json_q
