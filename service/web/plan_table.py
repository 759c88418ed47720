"""The layout table: one column per distinct layout (the chart's bars), one row per setting
that says something (a setting that is off or 1 in every layout is left out), in words."""

from __future__ import annotations

from dataclasses import fields
from html import escape

from service.core.report.answer_types import Answer, LayoutEntry
from service.web.chart_bars import Bar
from service.web.labels import layout_label, layout_value

TRAINING_ONLY = frozenset({"zero_stage", "sequence_parallel", "recompute", "micro_batch",
                           "grad_accum", "global_batch", "offload"})
# Settings left out when every layout has this value: nothing to read there.
PLAIN: dict[str, object] = {"nodes": 1, "pp": 1, "cp": 1, "ep": 1, "sequence_parallel": False,
                            "offload": "none", "grad_accum": 1}


def shown_settings(task: str, plans: list[LayoutEntry]) -> list[str]:
    names = []
    for f in fields(LayoutEntry):
        values = [getattr(p, f.name) for p in plans]
        if all(v is None for v in values):
            continue
        if task == "infer" and f.name in TRAINING_ONLY:
            continue
        if f.name in PLAIN and all(v == PLAIN[f.name] for v in values):
            continue
        names.append(f.name)
    return names


def layout_table(answer: Answer, bars: list[Bar]) -> str:
    plans = [b.plan for b in bars]
    heads = "".join(f"<th>{escape(b.name)}</th>" for b in bars)
    rows = [f"<table id=layout><tr><th>setting</th>{heads}</tr>"]
    for name in shown_settings(answer.task, plans):
        cells = "".join(f"<td>{escape(layout_value(name, getattr(b.plan, name)))}</td>"
                        for b in bars)
        rows.append(f"<tr><th>{escape(layout_label(name))}</th>{cells}</tr>")
    return "".join(rows) + "</table>" + _why(answer)


def _why(answer: Answer) -> str:
    planner = answer.planner
    if planner is None or not planner.why:
        return ""
    items = "".join(f"<li>{escape(line)}</li>" for line in planner.why)
    return f"<details><summary>Why this layout</summary><ul>{items}</ul></details>"
