"""A plain-text summary to paste into a ticket: the verdict, the likely peak, the layout and the
software, the fix, and the permalink; shown folded, with a Copy button."""

from __future__ import annotations

from html import escape

from service.core.report.answer_types import Answer
from service.core.report.headline import speaks_of_planner
from service.web.advice import fixes
from service.web.chart_bars import layout_brief
from service.web.launch_blocks import copy_button
from service.web.layout import gb
from service.web.verdict_box import BAND_WORDS


def ticket_text(answer: Answer, title: str) -> str:
    band = answer.error_band
    against = (f" against {gb(answer.gpu_usable_bytes)} usable"
               if answer.gpu_usable_bytes is not None else "")
    verdict = f" ({BAND_WORDS[band.verdict]})" if band.verdict in BAND_WORDS else ""
    lines = [f"fitcheck: {title}", f"Verdict: {answer.verdict}",
             f"Likely peak: {gb(band.low_bytes)} - {gb(band.high_bytes)} per GPU{against}{verdict}"]
    planner = answer.planner
    plan = planner.layout.plan if planner and planner.layout and speaks_of_planner(answer) \
        else answer.plan
    stack = f" ({planner.stack_name})" if planner and planner.stack_name else ""
    lines.append(f"Layout: {plan.gpus:,} GPUs, {layout_brief(plan)}{stack}")
    for i, fix in enumerate(fixes(answer)):
        lines.append(f"{'Fix' if i == 0 else 'Or'}: {fix.change} (cost: {fix.note})")
    if answer.link:
        lines.append(f"Report: {answer.link}")
    return "\n".join(lines)


def ticket_section(answer: Answer, title: str) -> str:
    return ("<div class='card no-print' id=ticket>"
            f"{copy_button('ticket-text', 'Copy a summary for a ticket')}"
            "<details><summary>Show the summary</summary>"
            f"<pre><code id=ticket-text>{escape(ticket_text(answer, title))}</code></pre>"
            "</details></div>")
