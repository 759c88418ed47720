"""The report a permalink renders: verdict, chart, components, assumptions, fits-on, compute."""

from __future__ import annotations

from html import escape
from typing import Any

from service.web.chart import LABELS, memory_chart
from service.web.layout import gb, gib, page

PLAN_KEYS = ("gpus", "nodes", "dp", "tp", "pp", "cp", "ep", "zero_stage", "sequence_parallel",
             "recompute", "micro_batch", "grad_accum", "global_batch", "offload", "context",
             "sequences", "max_concurrent_sequences")


def render_report(answer: dict[str, Any]) -> str:
    fits = answer.get("fits")
    css = "fits" if fits else ("nofit" if fits is False else "")
    what = {"train": "training", "finetune": "fine-tuning", "infer": "serving"}.get(
        str(answer.get("task")), str(answer.get("task")))
    body = [f"<h1>{escape(str(answer.get('model')))} · {escape(what)}"
            + (f" on {escape(str(answer['gpu']))}" if answer.get("gpu") else "") + "</h1>",
            f"<div class='verdict {css}' id=verdict>{escape(str(answer.get('verdict')))}</div>",
            _params(answer), "<h2>Memory per GPU</h2>", _chart(answer), _plan(answer),
            "<h2>Components</h2>", _components(answer), _compute(answer),
            "<h2>Assumptions</h2>", _list(answer.get("assumptions", [])), _fits_on(answer),
            _footer(answer)]
    return page(f"fitcheck: {answer.get('model')}", "".join(body))


def _params(answer: dict[str, Any]) -> str:
    total, active = answer.get("params_total", 0), answer.get("params_active", 0)
    text = f"{total / 1e9:,.2f} B parameters"
    if active != total:
        text += f", {active / 1e9:,.2f} B active per token"
    return f"<p class=muted>{text}</p>"


def _chart(answer: dict[str, Any]) -> str:
    bars: list[tuple[str, dict[str, int]]] = []
    plan = answer.get("plan") or {}
    gpus = plan.get("gpus", 1)
    bars.append((f"{gpus} GPU{'s' if gpus != 1 else ''}", answer["per_gpu_bytes"]))
    stated = answer.get("as_stated")
    if stated:
        bars.append((f"as stated ({stated['plan'].get('gpus', 1)})", stated["per_gpu_bytes"]))
    planner = answer.get("planner") or {}
    if planner.get("per_gpu_bytes") and planner.get("mode") == "given":
        bars.append(("planner's layout", planner["per_gpu_bytes"]))
    capacity = answer.get("gpu_usable_bytes")
    note = "" if capacity else "<p class=muted>No GPU given: no capacity line.</p>"
    return ("<div class=card>" + memory_chart(bars, capacity, planner.get("budget_bytes"))
            + note + "</div>")


def _plan(answer: dict[str, Any]) -> str:
    plan = answer.get("plan") or {}
    cells = "".join(f"<th>{escape(k)}</th>" for k in PLAN_KEYS if k in plan)
    values = "".join(f"<td>{escape(str(plan[k]))}</td>" for k in PLAN_KEYS if k in plan)
    min_gpus = answer.get("min_gpus")
    head = f"<p>Fewest GPUs that fit: <strong>{min_gpus}</strong></p>" if min_gpus else ""
    return f"<h2>Layout</h2>{head}<table><tr>{cells}</tr><tr>{values}</tr></table>"


def _components(answer: dict[str, Any]) -> str:
    rows = ["<table id=components><tr><th>component</th><th>GB</th><th>GiB</th>"
            "<th>formula</th><th>values</th><th>source</th></tr>"]
    for item in answer.get("formulas", []):
        label = LABELS.get(item["component"], item["component"])
        rows.append(f"<tr><td>{escape(label)}</td><td class=n>{gb(item['bytes'])}</td>"
                    f"<td class=n>{gib(item['bytes'])}</td><td><code>{escape(item['formula'])}"
                    f"</code></td><td><code>{escape(item['values'])}</code></td>"
                    f"<td>{escape(item['source'])}</td></tr>")
    total = answer["per_gpu_bytes"]["total"]
    rows.append(f"<tr><th>Total</th><th class=n>{gb(total)}</th><th class=n>{gib(total)}</th>"
                f"<th colspan=3>of {gb(answer.get('gpu_usable_bytes'))} usable</th></tr>")
    return "".join(rows) + "</table>"


def _compute(answer: dict[str, Any]) -> str:
    c = answer.get("compute")
    if not c:
        return ""
    cost = f"${c['cost_usd']:,.0f}" if c.get("cost_usd") is not None else "-"
    return ("<h2>Time and cost</h2><table id=compute><tr><th>FLOPs</th><th>days</th>"
            f"<th>GPU-hours</th><th>cost</th><th>formula</th></tr><tr>"
            f"<td class=n>{c['total_flops']:.3g}</td><td class=n>{c['days']:,.1f}</td>"
            f"<td class=n>{c['gpu_hours']:,.0f}</td><td class=n>{cost}</td>"
            f"<td><code>{escape(str(c.get('formula')))}</code></td></tr></table>")


def _list(items: list[str]) -> str:
    return "<ul>" + "".join(f"<li>{escape(str(i))}</li>" for i in items) + "</ul>"


def _fits_on(answer: dict[str, Any]) -> str:
    rows = answer.get("fits_on") or []
    if not rows:
        return ""
    out = ["<h2>Fits on (fewest GPUs of each type)</h2><table id=fits-on><tr><th>GPU</th>"
           "<th>GPUs</th><th>nodes</th><th>per GPU</th><th>budget</th><th>$/hour</th>"
           "<th>layout</th></tr>"]
    for r in rows:
        price = f"{r['price_per_hour_usd']:,.2f}" if r.get("price_per_hour_usd") else "-"
        out.append(f"<tr><td>{escape(r['name'])}</td><td class=n>{r['gpus'] or '-'}</td>"
                   f"<td class=n>{r['nodes'] or '-'}</td><td class=n>{gb(r['per_gpu_total'])}"
                   f"</td><td class=n>{gb(r['budget_bytes'])}</td><td class=n>{price}</td>"
                   f"<td>{escape(str(r['layout']))}</td></tr>")
    return "".join(out) + "</table>"


def _footer(answer: dict[str, Any]) -> str:
    link = escape(str(answer.get("link", "")))
    return (f"<p class=muted>Permalink: <a href='{link}'>{link}</a> (JSON with "
            "<code>Accept: application/json</code>). GB = 10<sup>9</sup> bytes, "
            "GiB = 2<sup>30</sup> bytes.</p>")
