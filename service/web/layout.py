"""The page frame shared by the home page, the form and the report: inline CSS and script, no
external resources (no CDN, no web fonts, an empty favicon)."""

from __future__ import annotations

from html import escape

from service.core import units
from service.web.styles import CSS


def page(title: str, body: str, script: str = "") -> str:
    tail = f"<script>{script}</script>" if script else ""
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        "<meta name=viewport content='width=device-width,initial-scale=1'>"
        "<link rel=icon href='data:,'>"
        f"<title>{escape(title)}</title><style>{CSS}</style></head><body><main>"
        "<header><a href='/'><strong>fitcheck</strong></a> "
        "<span class=muted>GPU memory and GPU counts for training and serving LLMs · "
        "<a href='/docs'>API</a></span></header>"
        f"{body}</main>{tail}</body></html>"
    )


def gb(n: int | float | None) -> str:
    """``units.gb``, with a dash for a missing figure."""
    return "-" if n is None else units.gb(n)


def gib(n: int | float | None) -> str:
    return "-" if n is None else units.gib(n)
