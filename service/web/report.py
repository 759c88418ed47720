"""The report a permalink renders, in the order a person reads it: the verdict with its error
band, what to change, the memory chart, the layout, the launch configs, then the reference:
components with formulas and sources, time and cost, assumptions, the fits-on table."""

from __future__ import annotations

from html import escape

from service.core.report.answer_types import Answer
from service.web.advice import advice
from service.web.chart import memory_chart
from service.web.chart_bars import chart_bars, scale_top
from service.web.launch_blocks import COPY_SCRIPT, launch_section
from service.web.layout import gb, page
from service.web.plan_table import layout_table
from service.web.tables import assumptions, components, compute, fits_on
from service.web.ticket import ticket_section
from service.web.verdict_box import headline

WHAT = {"train": "training", "finetune": "fine-tuning", "infer": "serving"}
WIDE, NARROW = 960, 360  # the chart's two drawings: a desktop and a phone


def report_title(answer: Answer) -> str:
    name = answer.model_name.split(" (")[0] or answer.model
    where = f" on {answer.gpu_name}" if answer.gpu_name else ""
    return f"{name} · {WHAT.get(answer.task, answer.task)}{where}"


def render_report(answer: Answer) -> str:
    title = report_title(answer)
    catalog = answer.gpu is None  # no GPU given: the fewest of each type is the answer
    body = [f"<h1>{escape(title)}</h1>", _params(answer), headline(answer),
            ticket_section(answer, title), advice(answer), fits_on(answer) if catalog else "",
            _chart(answer), "<h2>Layout</h2>", layout_table(answer, chart_bars(answer)),
            launch_section(answer), components(answer), compute(answer), assumptions(answer),
            "" if catalog else fits_on(answer), _footer(answer)]
    return page(f"fitcheck: {title}", "".join(body), COPY_SCRIPT)


def _params(answer: Answer) -> str:
    text = f"{escape(answer.model_name)}: {answer.params_total / 1e9:,.2f} B parameters"
    if answer.params_active != answer.params_total:
        text += f", {answer.params_active / 1e9:,.2f} B active per token"
    return f"<p class=muted>{text}</p>"


def _chart(answer: Answer) -> str:
    bars = chart_bars(answer)
    capacity = answer.gpu_usable_bytes
    budget = answer.planner.budget_bytes if answer.planner else None
    top = scale_top(bars, capacity)
    notes = []
    if capacity is None:
        notes.append("No GPU given: no usable-memory line.")
    for bar in bars:
        if bar.total > top:
            times = f", {bar.total / capacity:,.1f}x the usable memory" if capacity else ""
            notes.append(f"The “{bar.name}” bar is cut at the scale's end: it needs "
                         f"{gb(bar.total)} per GPU{times}.")
    note = "".join(f"<p class=muted>{escape(n)}</p>" for n in notes)
    return ("<h2>Memory per GPU</h2><div class='card chart'>"
            + memory_chart(bars, capacity, budget, top, WIDE, "memory-chart")
            + memory_chart(bars, capacity, budget, top, NARROW, "memory-chart-narrow")
            + note + "</div>")


def _footer(answer: Answer) -> str:
    link = escape(answer.link or "")
    return (f"<p class=muted>Permalink: <a href='{link}'>{link}</a> (JSON with "
            "<code>Accept: application/json</code>). GB = 10<sup>9</sup> bytes, "
            "GiB = 2<sup>30</sup> bytes.</p>")
