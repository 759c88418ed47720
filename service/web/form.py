"""The estimate form: empty on the home page; filled in again, with each problem next to its
field and the suggestions as links, when a browser's request could not be answered.

It submits a plain GET to ``/v1/estimate`` (no script); an empty field means "not stated". A
setting that came in the URL but has no field here (``tp=3``) gets a text field of its own, so
nothing typed is ever lost.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from html import escape

from service.core.hardware.gpus import all_gpus
from service.core.model.presets import all_presets
from service.web.form_fields import FIELDS, GROUPS, FormField, field_label
from service.web.layout import page


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with the request, for a person."""

    field: str  # a request field, or '' for the request as a whole
    message: str
    accepted: str = ""
    suggestions: tuple[tuple[str, str], ...] = ()  # (name, link to the estimate with it)


@dataclass(frozen=True, slots=True)
class FormState:
    values: dict[str, str] = field(default_factory=dict)  # as typed
    problems: tuple[Problem, ...] = ()
    notice: str = ""  # a problem with no field: the service, not the request


def _problem_text(problem: Problem) -> str:
    text = escape(problem.message)
    if problem.accepted:
        text += f". Accepted: {escape(problem.accepted)}"
    if problem.suggestions:
        links = " or ".join(f"<a href='{escape(href)}'>{escape(name)}</a>"
                            for name, href in problem.suggestions)
        text += f". Did you mean {links}?"
    return text


def _attr(value: str) -> str:
    """An attribute value: bare when it is a plain name, else quoted and escaped (a setting
    from the URL can be named anything)."""
    return value if re.fullmatch(r"[a-z0-9_-]+", value) else f"'{escape(value)}'"


def _control(spec: FormField, value: str, invalid: bool, described: str) -> str:
    aria = (f" aria-invalid=true aria-describedby={described}" if invalid else "")
    ident = _attr(f"field-{spec.name}")
    name = _attr(spec.name)
    if spec.kind == "select":
        known = {v for v, _ in spec.options}
        items = [f"<option value=''>{escape(spec.hint)}</option>"]
        if value and value not in known:  # kept as typed, so the person sees what was wrong
            items.append(f"<option value='{escape(value)}' selected>{escape(value)}</option>")
        items += [f"<option value='{escape(v)}'{' selected' if v == value else ''}>"
                  f"{escape(text)}</option>" for v, text in spec.options]
        return f"<select id={ident} name={name}{aria}>{''.join(items)}</select>"
    extra = " required" if spec.required else ""
    if spec.datalist:
        extra += f" list={spec.datalist} autocomplete=off"
    bounds = spec.bounds() if spec.kind == "number" else None
    kind = "text"
    if bounds is not None:
        kind = "number"
        extra += f" min={bounds[0]} max={bounds[1]} step={bounds[2]}"
    return (f"<input id={ident} name={name} type={kind} value='{escape(value)}' "
            f"placeholder='{escape(spec.hint)}'{extra}{aria}>")


def _field(spec: FormField, state: FormState) -> str:
    value = state.values.get(spec.name, "")
    mine = [p for p in state.problems if p.field.split(".")[0] == spec.name]
    described = _attr(f"error-{spec.name}")
    errors = "".join(f"<span class=error id={described}>{_problem_text(p)}</span>"
                     for p in mine)
    return (f"<label>{escape(spec.label)}{_control(spec, value, bool(mine), described)}"
            f"{errors}</label>")


def _summary(state: FormState) -> str:
    if not state.problems and not state.notice:
        return ""
    items = []
    for problem in state.problems:
        name = problem.field.split(".")[0]
        where = (f"<a href='#field-{escape(name)}'>{escape(field_label(name))}</a>"
                 if name else "the request")
        items.append(f"<li>{where}: {_problem_text(problem)}</li>")
    notice = f"<p>{escape(state.notice)}</p>" if state.notice else ""
    listing = f"<ul>{''.join(items)}</ul>" if items else ""
    return (f"<div class=problems role=alert id=problems><h2>The estimate could not be made"
            f"</h2>{notice}{listing}<p class=muted>Change the fields below and estimate again."
            "</p></div>")


def _extra_fields(state: FormState) -> str:
    """Settings from the URL that the form has no field for, as text fields of their own."""
    names = [n for n in state.values if n not in FIELDS]
    if not names:
        return ""
    specs = [FormField(name, name.replace("_", " "), "text") for name in names]
    return ("<fieldset><legend>More settings from the link</legend><div class=grid>"
            + "".join(_field(spec, state) for spec in specs) + "</div></fieldset>")


@cache
def _datalists() -> str:
    models = "".join(f"<option value='{escape(p.id)}'>{escape(p.name)}</option>"
                     for p in all_presets())
    gpus = "".join(f"<option value='{escape(g.id)}'>{escape(g.name)}</option>"
                   for g in all_gpus())
    return f"<datalist id=models>{models}</datalist><datalist id=gpus>{gpus}</datalist>"


def estimate_form(state: FormState) -> str:
    groups = "".join(
        f"<fieldset><legend>{escape(title)}</legend><div class=grid>"
        + "".join(_field(spec, state) for spec in specs) + "</div></fieldset>"
        for title, specs in GROUPS)
    return (_summary(state) + "<form class=card id=estimate-form method=get "
            f"action='/v1/estimate'>{groups}{_extra_fields(state)}"
            "<button type=submit>Estimate</button></form>" + _datalists())


def render_form_page(state: FormState) -> str:
    intro = ("<h1>Will it fit, and on how many GPUs?</h1><p class=muted>Leave a field empty "
             "for its default; every default is listed in the report. The report's address "
             "is its permalink.</p>")
    links = ("<p class=muted>API: <a href='/docs'>/docs</a> · <a href='/v1/models'>/v1/models"
             "</a> · <a href='/v1/gpus'>/v1/gpus</a> · <a href='/readyz'>/readyz</a></p>")
    title = "fitcheck: check the request" if state.problems or state.notice else "fitcheck"
    return page(title, intro + estimate_form(state) + links)
