"""The report's reference tables: components with formulas and sources, time and cost, the
assumptions, and the fewest GPUs of every type. Wide tables stack into cards on a phone."""

from __future__ import annotations

from html import escape

from service.core.report.answer_types import Answer
from service.core.report.headline import speaks_of_planner
from service.render.assumption_text import assumption_line, mfu_range
from service.web.chart import LABELS
from service.web.layout import gb, gib


def _cell(label: str, body: str, cls: str = "") -> str:
    klass = f" class='{cls}'" if cls else ""
    return f"<td data-label='{escape(label)}'{klass}>{body}</td>"


def components(answer: Answer) -> str:
    """The components of the layout the verdict speaks of (the planner's, when the stated one
    does not fit on the GPUs given)."""
    formulas, total, whose = answer.formulas, answer.per_gpu_bytes.total, ""
    layout = answer.planner.layout if answer.planner else None
    if speaks_of_planner(answer) and layout is not None:
        formulas, total = layout.formulas, layout.per_gpu_bytes.total
        whose = (f"<p class=muted>Of the planner's layout on {layout.plan.gpus:,} GPUs, the one "
                 "the verdict is about; the request as stated is in the chart.</p>")
    rows = ["<table id=components class=stack><tr><th>component</th><th>GB</th><th>GiB</th>"
            "<th>formula</th><th>values</th><th>source</th></tr>"]
    for item in formulas:
        label = LABELS.get(item.component, item.component.replace("_", " ").capitalize())
        note = f"<br><span class=muted>{escape(item.note)}</span>" if item.note else ""
        rows.append("<tr>" + _cell("component", escape(label) + note)
                    + _cell("GB", gb(item.bytes), "n") + _cell("GiB", gib(item.bytes), "n")
                    + _cell("formula", f"<code>{escape(item.expression)}</code>")
                    + _cell("values", f"<code>{escape(item.values)}</code>")
                    + _cell("source", escape(item.source)) + "</tr>")
    usable = (f"of {gb(answer.gpu_usable_bytes)} usable" if answer.gpu_usable_bytes
              else "no GPU chosen")
    rows.append(f"<tr><th>Total</th>{_cell('GB', gb(total), 'n')}{_cell('GiB', gib(total), 'n')}"
                f"<td colspan=3 data-label=''>{usable}</td></tr>")
    return "<h2>Components</h2>" + whose + "".join(rows) + "</table>"


def compute(answer: Answer) -> str:
    c = answer.compute
    if c is None:
        return ""
    cost = f"${c.cost_usd:,.0f}" if c.cost_usd is not None else "-"
    return ("<h2>Time and cost</h2><table id=compute class=stack><tr><th>FLOPs</th>"
            "<th>days</th><th>GPU-hours</th><th>cost</th><th>formula</th></tr><tr>"
            + _cell("FLOPs", f"{c.total_flops:.3g}", "n")
            + _cell(f"days on {c.gpus:,} GPUs", f"{c.days:,.1f}" + (
                f" ({mfu_range(f'{c.days_range[0]:,.1f}', f'{c.days_range[1]:,.1f}')})"
                if c.days_range else ""), "n")
            + _cell("GPU-hours", f"{c.gpu_hours:,.0f}", "n") + _cell("cost", cost, "n")
            + _cell("formula", f"<code>{escape(c.formula)}</code>") + "</tr></table>")


def assumptions(answer: Answer) -> str:
    main = [a for a in answer.assumptions if not a.minor]
    minor = [a for a in answer.assumptions if a.minor]
    out = "<h2>Assumptions</h2><ul id=assumptions>" + "".join(
        f"<li>{escape(assumption_line(a))}</li>" for a in main) + "</ul>"
    if minor:
        out += ("<details><summary>Finer assumptions</summary><ul>" + "".join(
            f"<li>{escape(assumption_line(a))}</li>" for a in minor) + "</ul></details>")
    return out


def fits_on(answer: Answer) -> str:
    if not answer.fits_on:
        return ""
    out = ["<h2>Fits on (fewest GPUs of each type)</h2><table id=fits-on><tr>"
           "<th>GPU</th><th>GPUs</th><th class=opt>nodes</th><th>per GPU</th>"
           "<th class=opt>budget</th><th>$/hour</th><th class=opt>layout</th></tr>"]
    for r in answer.fits_on:
        price = f"${r.price_per_hour_usd:,.2f}" if r.price_per_hour_usd else "-"
        out.append("<tr>" + _cell("GPU", escape(r.name))
                   + _cell("GPUs", f"{r.gpus:,}" if r.gpus else "does not fit", "n")
                   + _cell("nodes", f"{r.nodes:,}" if r.nodes else "-", "n opt")
                   + _cell("per GPU", gb(r.per_gpu_total), "n")
                   + _cell("budget", gb(r.budget_bytes), "n opt") + _cell("$/hour", price, "n")
                   + _cell("layout", escape(r.layout), "opt") + "</tr>")
    return "".join(out) + "</table>"
