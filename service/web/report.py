"""The report a permalink renders: verdict, chart, components, assumptions, fits-on, compute."""

from __future__ import annotations

from dataclasses import fields
from html import escape

from service.core.report.answer_types import Answer, LayoutEntry, PerGpuBytes
from service.render.assumption_text import assumption_line
from service.web.chart import LABELS, memory_chart
from service.web.layout import gb, gib, page

WHAT = {"train": "training", "finetune": "fine-tuning", "infer": "serving"}


def bytes_map(per_gpu: PerGpuBytes) -> dict[str, int]:
    return {f.name: getattr(per_gpu, f.name) for f in fields(per_gpu)}


def render_report(answer: Answer) -> str:
    css = "fits" if answer.fits else ("nofit" if answer.fits is False else "")
    body = [f"<h1>{escape(answer.model)} · {escape(WHAT.get(answer.task, answer.task))}"
            + (f" on {escape(answer.gpu)}" if answer.gpu else "") + "</h1>",
            f"<div class='verdict {css}' id=verdict>{escape(answer.verdict)}</div>",
            _params(answer), "<h2>Memory per GPU</h2>", _chart(answer), _plan(answer),
            "<h2>Components</h2>", _components(answer), _compute(answer),
            "<h2>Assumptions</h2>", _assumptions(answer), _fits_on(answer), _footer(answer)]
    return page(f"fitcheck: {answer.model}", "".join(body))


def _params(answer: Answer) -> str:
    text = f"{answer.params_total / 1e9:,.2f} B parameters"
    if answer.params_active != answer.params_total:
        text += f", {answer.params_active / 1e9:,.2f} B active per token"
    return f"<p class=muted>{text}</p>"


def _chart(answer: Answer) -> str:
    gpus = answer.plan.gpus
    bars = [(f"{gpus} GPU{'s' if gpus != 1 else ''}", bytes_map(answer.per_gpu_bytes))]
    if answer.as_stated is not None:
        bars.append((f"as stated ({answer.as_stated.plan.gpus})",
                     bytes_map(answer.as_stated.per_gpu_bytes)))
    planner = answer.planner
    if planner is not None and planner.layout is not None and planner.mode == "given":
        bars.append(("planner's layout", bytes_map(planner.layout.per_gpu_bytes)))
    capacity = answer.gpu_usable_bytes
    note = "" if capacity else "<p class=muted>No GPU given: no capacity line.</p>"
    return ("<div class=card>" + memory_chart(bars, capacity,
                                              planner.budget_bytes if planner else None)
            + note + "</div>")


def _layout_cells(plan: LayoutEntry) -> tuple[str, str]:
    shown = [(f.name, getattr(plan, f.name)) for f in fields(plan)
             if getattr(plan, f.name) is not None]
    heads = "".join(f"<th>{escape(name)}</th>" for name, _ in shown)
    values = "".join(f"<td>{escape(str(value))}</td>" for _, value in shown)
    return heads, values


def _plan(answer: Answer) -> str:
    heads, values = _layout_cells(answer.plan)
    head = (f"<p>Fewest GPUs that fit: <strong>{answer.min_gpus}</strong></p>"
            if answer.min_gpus else "")
    return f"<h2>Layout</h2>{head}<table><tr>{heads}</tr><tr>{values}</tr></table>"


def _components(answer: Answer) -> str:
    rows = ["<table id=components><tr><th>component</th><th>GB</th><th>GiB</th>"
            "<th>formula</th><th>values</th><th>source</th></tr>"]
    for item in answer.formulas:
        label = LABELS.get(item.component, item.component)
        rows.append(f"<tr><td>{escape(label)}</td><td class=n>{gb(item.bytes)}</td>"
                    f"<td class=n>{gib(item.bytes)}</td><td><code>{escape(item.expression)}"
                    f"</code></td><td><code>{escape(item.values)}</code></td>"
                    f"<td>{escape(item.source)}</td></tr>")
    total = answer.per_gpu_bytes.total
    rows.append(f"<tr><th>Total</th><th class=n>{gb(total)}</th><th class=n>{gib(total)}</th>"
                f"<th colspan=3>of {gb(answer.gpu_usable_bytes)} usable</th></tr>")
    return "".join(rows) + "</table>"


def _compute(answer: Answer) -> str:
    c = answer.compute
    if c is None:
        return ""
    cost = f"${c.cost_usd:,.0f}" if c.cost_usd is not None else "-"
    return ("<h2>Time and cost</h2><table id=compute><tr><th>FLOPs</th><th>days</th>"
            f"<th>GPU-hours</th><th>cost</th><th>formula</th></tr><tr>"
            f"<td class=n>{c.total_flops:.3g}</td><td class=n>{c.days:,.1f}</td>"
            f"<td class=n>{c.gpu_hours:,.0f}</td><td class=n>{cost}</td>"
            f"<td><code>{escape(c.formula)}</code></td></tr></table>")


def _assumptions(answer: Answer) -> str:
    return "<ul>" + "".join(f"<li>{escape(assumption_line(a))}</li>"
                            for a in answer.assumptions) + "</ul>"


def _fits_on(answer: Answer) -> str:
    if not answer.fits_on:
        return ""
    out = ["<h2>Fits on (fewest GPUs of each type)</h2><table id=fits-on><tr><th>GPU</th>"
           "<th>GPUs</th><th>nodes</th><th>per GPU</th><th>budget</th><th>$/hour</th>"
           "<th>layout</th></tr>"]
    for r in answer.fits_on:
        price = f"{r.price_per_hour_usd:,.2f}" if r.price_per_hour_usd else "-"
        out.append(f"<tr><td>{escape(r.name)}</td><td class=n>{r.gpus or '-'}</td>"
                   f"<td class=n>{r.nodes or '-'}</td><td class=n>{gb(r.per_gpu_total)}"
                   f"</td><td class=n>{gb(r.budget_bytes)}</td><td class=n>{price}</td>"
                   f"<td>{escape(r.layout)}</td></tr>")
    return "".join(out) + "</table>"


def _footer(answer: Answer) -> str:
    link = escape(answer.link or "")
    return (f"<p class=muted>Permalink: <a href='{link}'>{link}</a> (JSON with "
            "<code>Accept: application/json</code>). GB = 10<sup>9</sup> bytes, "
            "GiB = 2<sup>30</sup> bytes.</p>")
