"""The figures an answer shows: per-GPU bytes by component against one budget figure, whether
it fits, the verdict and the layout. They describe the answer's own layout, except when GPUs
were given, the layout as stated does not fit and the planner's layout on them does: then the
planner's, as the reply says."""

from __future__ import annotations

from dataclasses import dataclass

from bot.answer_view import AnswerView, LayoutView, PerGpuView

COMPONENTS = (("weights", "weights"), ("gradients", "gradients"), ("optimizer", "optimizer"),
              ("activations", "activations"), ("kv_cache", "KV cache"),
              ("temporary", "temporary"), ("overhead", "overhead"))


@dataclass(frozen=True, slots=True)
class Figures:
    per_gpu: PerGpuView
    budget: int | None  # the one figure the total is held against
    budget_kind: str  # "budget" (the planner's) or "usable" (the GPU's)
    fits: bool | None
    verdict: str
    layout: LayoutView


def figures(answer: AnswerView | None) -> Figures | None:
    """None when there is no answer (help, a question back, nonsense)."""
    if answer is None:
        return None
    planner = answer.planner
    budget, kind = (planner.budget_bytes, "budget") if planner else \
        (answer.gpu_usable_bytes, "usable")
    rescued = planner is not None and planner.mode == "given" and planner.fits \
        and answer.fits is False and planner.layout is not None
    if rescued and planner is not None and planner.layout is not None:
        return Figures(planner.layout.per_gpu_bytes, budget, kind, True, answer.verdict,
                       planner.layout.plan)
    return Figures(answer.per_gpu_bytes, budget, kind, answer.fits, answer.verdict, answer.plan)


def table(f: Figures) -> str:
    """The per-component table, monospaced, in decimal GB: what a person reads at a glance."""
    per = f.per_gpu
    rows = [(label, getattr(per, key)) for key, label in COMPONENTS if getattr(per, key)]
    lines = [f"{label:<12}{value / 1e9:>9,.1f} GB" for label, value in rows]
    lines.append("-" * 24)
    line = f"{'total':<12}{per.total / 1e9:>9,.1f} GB"
    if f.budget:
        what = "budget" if f.budget_kind == "budget" else "usable"
        line += f"  of {f.budget / 1e9:,.1f} GB {what} ({per.total / f.budget:.0%})"
    lines.append(line)
    return "```" + "\n".join(lines) + "```"
