"""What to change when the job does not fit: the planner's fix and the next two, each with what
it costs and a link to the estimate with that change made."""

from __future__ import annotations

from html import escape
from urllib.parse import parse_qsl, urlencode, urlsplit

from service.core.report.answer_types import Answer, FixEntry
from service.core.report.headline import fix_label
from service.permalink import short_float
from service.web.layout import gb

SHOWN = 3  # the fix and the next two


def changed_link(link: str | None, changes: dict[str, str | int | float | bool]) -> str | None:
    """The permalink's path and query with ``changes`` made (the service redirects a browser to
    the canonical permalink)."""
    if not link or not changes:
        return None
    parts = urlsplit(link)
    query = dict(parse_qsl(parts.query, keep_blank_values=False))
    for name, value in changes.items():
        query[name] = _query_value(value)
    return f"{parts.path}?{urlencode(query)}"


def _query_value(value: str | int | float | bool) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return short_float(value)
    return str(value)


def _fix(answer: Answer, fix: FixEntry, first: bool) -> str:
    per_gpu = f" · {gb(fix.per_gpu_total)} per GPU" if fix.per_gpu_total else ""
    href = changed_link(answer.link, fix.changes)
    open_it = f" <a href='{escape(href)}'>open this estimate</a>" if href else ""
    lead = f"<strong>{fix_label(answer)}:</strong> " if first else ""
    return (f"<li class=fix>{lead}<strong>{escape(fix.change)}</strong>{per_gpu}"
            f"<br><span class=muted>Cost: {escape(fix.note)}</span>{open_it}</li>")


def fixes(answer: Answer) -> list[FixEntry]:
    planner = answer.planner
    if planner is None or planner.fix is None:
        return []
    return [planner.fix, *planner.other_fixes][:SHOWN]


def advice(answer: Answer) -> str:
    shown = fixes(answer)
    if not shown:
        return ""
    items = "".join(_fix(answer, fix, i == 0) for i, fix in enumerate(shown))
    return f"<h2>What to change</h2><ol class=fixes id=fixes>{items}</ol>"
