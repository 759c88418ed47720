"""The memory chart as inline SVG: one stacked bar per layout against the GPU's usable memory
(solid red line) and the planner's budget (dashed).

Every label has its own place, so none can overlap another or leave the picture: a bar's name
and figures sit on their own lines above it, the tick labels above the plot, the line labels
each on its own row below it (kept inside the edges), the legend in rows that wrap. A bar past
the scale is cut with a break mark and says so. Text widths are estimated generously
(``CHAR_EM`` of the font size per character) and long lines are shortened to fit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape

from service.web.chart_bars import Bar
from service.web.layout import gb

COLORS = {
    "weights": "#4c78a8", "gradients": "#f58518", "optimizer": "#e45756",
    "activations": "#72b7b2", "kv_cache": "#54a24b", "temporary": "#eeca3b",
    "overhead": "#b279a2",
}
LABELS = {
    "weights": "Weights", "gradients": "Gradients", "optimizer": "Optimizer state",
    "activations": "Activations", "kv_cache": "KV cache", "temporary": "Temporary",
    "overhead": "Overhead",
}
CHAR_EM = 0.62  # a generous average advance of system-ui text, in ems
PAD, FONT, SMALL, BAR, ROW = 8, 13, 11.5, 26, 18


@dataclass(frozen=True, slots=True)
class Frame:
    width: int
    top: float  # bytes at the right end of the plot
    max_ticks: int

    def x(self, value: float) -> float:
        return PAD + (self.width - 2 * PAD) * min(value, self.top) / self.top


def text_width(text: str, size: float) -> float:
    return len(text) * size * CHAR_EM


def fit_text(text: str, size: float, room: float) -> str:
    """``text``, shortened with an ellipsis to fit ``room`` pixels."""
    if text_width(text, size) <= room:
        return text
    keep = max(int(room / (size * CHAR_EM)) - 1, 1)
    return text[:keep].rstrip(" ,;") + "…"


def _text(x: float, y: float, body: str, size: float, cls: str, fill: str = "#1f2328") -> str:
    """A label with a white halo, so a grid or budget line behind it never hides a letter."""
    return (f"<text class='{cls}' x='{x:.1f}' y='{y:.1f}' font-size='{size}' fill='{fill}' "
            "stroke='#fff' stroke-width='3' stroke-linejoin='round' paint-order='stroke'>"
            f"{escape(body)}</text>")


def memory_chart(bars: list[Bar], capacity: int | None, budget: int | None, top: float,
                 width: int, chart_id: str) -> str:
    """Shapes first (grid, bars, the red lines across each bar), then every label on top, each
    with a halo; the red lines run across the bars only, never through a bar's name."""
    frame = Frame(width, top, 8 if width >= 640 else 4)
    room = width - 2 * PAD
    shapes: list[str] = []
    labels: list[str] = []
    ticks = _ticks(top, frame.max_ticks)
    for tick in ticks:
        label = tick_label(tick, ticks[1] if len(ticks) > 1 else top)
        labels.append(_text(_left(frame.x(tick), label, width), 18, label, SMALL, "label tick",
                            "#57606a"))
    plot_top = y = 26.0
    spans: list[tuple[float, float]] = []  # each bar's top and bottom: where the lines run
    for bar in bars:
        y += ROW
        labels.append(_text(PAD, y, fit_text(bar.name, FONT, room), FONT, "label name"))
        for line in _figures(bar, top, room):
            y += ROW - 2
            labels.append(_text(PAD, y, line, SMALL, "label figures", "#57606a"))
        y += 6
        shapes.append(_bar(frame, bar, y))
        spans.append((y - 4, y + BAR + 4))
        y += BAR
    plot_bottom = y + 6
    grid = [f"<line x1='{frame.x(t):.1f}' x2='{frame.x(t):.1f}' y1='{plot_top:.1f}' "
            f"y2='{plot_bottom:.1f}' stroke='#e1e4e8'/>" for t in ticks]
    for mark, dash, name in ((budget, "5,4", "budget"), (capacity, "", "usable")):
        if not mark:
            continue
        at = frame.x(mark)
        ends = [*spans[:-1], (spans[-1][0], plot_bottom + 4)] if spans else []
        shapes += [f"<line class=capacity x1='{at:.1f}' x2='{at:.1f}' y1='{y1:.1f}' "
                   f"y2='{y2:.1f}' stroke='#cf222e' stroke-width='2' stroke-dasharray='{dash}'/>"
                   for y1, y2 in ends]
        y += ROW
        label = f"{name} {gb(mark)}" + (" (dashed line)" if dash else " (red line)")
        labels.append(_text(_left(at, label, width), y, label, SMALL, "label line-label",
                            "#a40e26"))
    height = _legend(shapes, labels, bars, y + 10, width) + 8
    return (f"<svg id={chart_id} class={'wide' if width >= 640 else 'narrow'} role=img "
            f"xmlns='http://www.w3.org/2000/svg' viewBox='0 0 {width} {height:.0f}' "
            f"width='{width}' height='{height:.0f}' "
            "aria-label='memory per GPU by component against the GPU&#39;s usable memory'>"
            + "".join(grid + shapes + labels) + "</svg>")


def _left(center: float, label: str, width: int) -> float:
    """Where a label centred on ``center`` starts, kept inside the picture."""
    size = text_width(label, SMALL)
    return min(max(center - size / 2, PAD), width - PAD - size)


def _figures(bar: Bar, top: float, room: float) -> list[str]:
    """'150.5 GB per GPU · ZeRO-3, TP=4', on two lines where one is too narrow."""
    size = f"{gb(bar.total)} per GPU" + (", off the scale (bar cut)" if bar.total > top else "")
    one = f"{size} · {bar.layout}"
    if text_width(one, SMALL) <= room:
        return [one]
    return [fit_text(size, SMALL, room), fit_text(bar.layout, SMALL, room)]


def _bar(frame: Frame, bar: Bar, y: float) -> str:
    out = []
    start = 0
    for key, color in COLORS.items():
        value = bar.per_gpu.get(key, 0)
        if value <= 0 or start >= frame.top:
            start += max(value, 0)
            continue
        left, right = frame.x(start), frame.x(start + value)
        out.append(f"<rect class=seg x='{left:.1f}' y='{y:.1f}' "
                   f"width='{max(right - left, 0.5):.1f}' height='{BAR}' fill='{color}'>"
                   f"<title>{LABELS[key]}: {gb(value)}</title></rect>")
        start += value
    if bar.total > frame.top:  # a break mark: two white slashes across the cut end
        end = frame.x(frame.top)
        for shift in (-18, -11):
            out.append(f"<path class=cut d='M{end + shift - 4:.1f} {y + BAR + 2:.1f} "
                       f"L{end + shift + 4:.1f} {y - 2:.1f}' stroke='#fff' stroke-width='3'/>")
    return "".join(out)


def _legend(shapes: list[str], labels: list[str], bars: list[Bar], y: float,
            width: int) -> float:
    """The components drawn, in rows that wrap; returns the last row's baseline."""
    shown = [k for k in COLORS if any(b.per_gpu.get(k, 0) > 0 for b in bars)]
    x = float(PAD)
    y += 12
    for key in shown:
        need = 16 + text_width(LABELS[key], SMALL)
        if x + need > width - PAD and x > PAD:
            x, y = float(PAD), y + ROW
        shapes.append(f"<rect x='{x:.1f}' y='{y - 10:.1f}' width='11' height='11' "
                      f"fill='{COLORS[key]}'/>")
        labels.append(_text(x + 16, y, LABELS[key], SMALL, "label legend"))
        x += need + 14
    return y


def _ticks(top: float, most: int) -> list[float]:
    """Round steps (1, 2 or 5 x a power of ten bytes), at most ``most`` of them over ``top``."""
    step = 10 ** max(math.floor(math.log10(max(top, 1) / most)), 0)
    for factor in (1, 2, 5, 10):
        if top / (step * factor) <= most:
            step *= factor
            break
    return [i * step for i in range(int(top // step) + 1)]


def tick_label(value: float, step: float) -> str:
    """'40 GB', or in MB when the steps are under a GB (decimal units, as the figures)."""
    if step >= 1e9:
        return f"{value / 1e9:,.0f} GB"
    if step >= 1e6:
        return f"{value / 1e6:,.0f} MB"
    return f"{value / 1e3:,.0f} kB"
