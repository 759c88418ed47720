"""The page frame shared by the home page and the report: inline CSS, no external resources."""

from __future__ import annotations

from html import escape

from service.core import units

CSS = """
body{font:15px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#1f2328;
background:#f6f8fa}
main{max-width:1100px;margin:0 auto;padding:24px}
header a{color:inherit;text-decoration:none}
h1{font-size:22px;margin:0 0 4px} h2{font-size:17px;margin:28px 0 8px}
.verdict{font-size:19px;font-weight:600;padding:12px 16px;border-radius:8px;margin:12px 0;
background:#fff;border-left:6px solid #888}
.verdict.fits{border-color:#1a7f37} .verdict.nofit{border-color:#cf222e}
table{border-collapse:collapse;width:100%;background:#fff;font-size:13.5px}
th,td{border:1px solid #d0d7de;padding:5px 8px;text-align:left;vertical-align:top}
th{background:#eef1f4} td.n{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}
code{font-size:12.5px} .muted{color:#57606a;font-size:13px}
.card{background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:12px}
form.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(200px,1fr));gap:10px}
label{display:flex;flex-direction:column;font-size:13px;color:#57606a}
input,select{font:inherit;padding:5px;border:1px solid #d0d7de;border-radius:6px;color:#1f2328}
button{font:inherit;padding:8px 18px;border-radius:6px;border:0;background:#1f6feb;color:#fff}
"""


def page(title: str, body: str) -> str:
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        "<meta name=viewport content='width=device-width,initial-scale=1'>"
        "<link rel=icon href='data:,'>"
        f"<title>{escape(title)}</title><style>{CSS}</style></head><body><main>"
        "<header><a href='/'><strong>fitcheck</strong></a> "
        "<span class=muted>GPU memory and GPU counts for training and serving LLMs · "
        "<a href='/docs'>API</a></span></header>"
        f"{body}</main></body></html>"
    )


def gb(n: int | float | None) -> str:
    """``units.gb``, with a dash for a missing figure."""
    return "-" if n is None else units.gb(n)


def gib(n: int | float | None) -> str:
    return "-" if n is None else units.gib(n)
