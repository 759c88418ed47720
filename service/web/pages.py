"""``GET /``: the home page, a form that opens an estimate's permalink."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import HTMLResponse

from service.web.home import render_home

router = APIRouter(include_in_schema=False)


@router.get("/", response_class=HTMLResponse)
async def home() -> HTMLResponse:
    return HTMLResponse(render_home())
