"""A stacked bar chart of per-GPU memory against the GPU's capacity, as inline SVG."""

from __future__ import annotations

from html import escape

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
WIDTH, LEFT, RIGHT, BAR, GAP, TOP = 960, 150, 20, 34, 22, 30


def memory_chart(bars: list[tuple[str, dict[str, int]]], capacity: int | None,
                 budget: int | None = None) -> str:
    """One horizontal bar per (label, per_gpu_bytes); a red line at the usable capacity and a
    dashed one at the planner's budget."""
    top_value = max([b.get("total", 0) for _, b in bars] + [capacity or 0, 1]) * 1.08
    span = WIDTH - LEFT - RIGHT
    height = TOP + len(bars) * (BAR + GAP) + 56

    def x(value: float) -> float:
        return LEFT + span * value / top_value

    parts = [f"<svg id=memory-chart role=img xmlns='http://www.w3.org/2000/svg' "
             f"viewBox='0 0 {WIDTH} {height}' width='100%' "
             "aria-label='per-GPU memory by component against GPU capacity'>"]
    for tick in _ticks(top_value):
        parts.append(f"<line x1='{x(tick):.1f}' x2='{x(tick):.1f}' y1='{TOP - 8}' "
                     f"y2='{height - 50}' stroke='#e1e4e8'/><text x='{x(tick):.1f}' "
                     f"y='{TOP - 12}' font-size='11' text-anchor='middle' fill='#57606a'>"
                     f"{tick / 1e9:,.0f} GB</text>")
    for row, (label, per_gpu) in enumerate(bars):
        y = TOP + row * (BAR + GAP)
        parts.append(f"<text x='{LEFT - 8}' y='{y + BAR / 2 + 4}' font-size='13' "
                     f"text-anchor='end'>{escape(label)}</text>")
        start: int = 0
        for key, color in COLORS.items():
            value = per_gpu.get(key, 0)
            if value <= 0:
                continue
            parts.append(f"<rect class=seg x='{x(start):.1f}' y='{y}' "
                         f"width='{max(x(start + value) - x(start), 0.5):.1f}' height='{BAR}' "
                         f"fill='{color}'><title>{LABELS[key]}: {gb(value)}</title></rect>")
            start += value
        parts.append(f"<text x='{x(start) + 6:.1f}' y='{y + BAR / 2 + 4}' font-size='12'>"
                     f"{gb(start)}</text>")
    bottom = height - 50
    for mark, dash, name, anchor, shift in ((capacity, "", "usable", "start", 4),
                                             (budget, "5,4", "budget", "end", -4)):
        if mark:
            parts.append(f"<line class=capacity x1='{x(mark):.1f}' x2='{x(mark):.1f}' "
                         f"y1='{TOP - 4}' y2='{bottom}' stroke='#cf222e' stroke-width='2' "
                         f"stroke-dasharray='{dash}'/><text x='{x(mark) + shift:.1f}' "
                         f"y='{bottom + 14}' font-size='11' text-anchor='{anchor}' "
                         f"fill='#cf222e'>{name} {gb(mark)}</text>")
    legend_x = LEFT
    for key, color in COLORS.items():
        parts.append(f"<rect x='{legend_x}' y='{height - 22}' width='12' height='12' "
                     f"fill='{color}'/><text x='{legend_x + 16}' y='{height - 12}' "
                     f"font-size='12'>{LABELS[key]}</text>")
        legend_x += 16 + 8 * len(LABELS[key]) + 18
    parts.append("</svg>")
    return "".join(parts)


def _ticks(top: float) -> list[float]:
    step = 10 ** 9
    while top / step > 8:
        for factor in (2, 2.5, 2):
            step = int(step * factor)
            if top / step <= 8:
                break
    return [i * step for i in range(int(top // step) + 1)]
