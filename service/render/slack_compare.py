"""The reply for a comparison: one line per side, then which side wins and on what."""

from __future__ import annotations

from dataclasses import dataclass

from service.core.hardware.gpus import find_gpu
from service.core.memory.breakdown import Estimate
from service.core.planning.plan_types import Plan
from service.core.units import gb
from service.parser.types import Parsed
from service.render.slack_reply import assumptions_line, safe, short_gpu


@dataclass(frozen=True, slots=True)
class Side:
    label: str
    estimate: Estimate | None
    plan: Plan | None
    error: str | None

    @property
    def fits(self) -> bool:
        if self.plan is not None:
            return self.plan.fits
        return self.estimate is not None and self.estimate.fits is not False

    @property
    def gpus(self) -> float:
        if self.plan is None:
            return 1.0
        return float(self.plan.min_gpus or self.plan.gpus or 1e9)

    @property
    def per_gpu(self) -> int:
        shown = self.plan.estimate if self.plan is not None and self.plan.estimate else self.estimate
        return shown.total_bytes if shown is not None else 0


def _line(side: Side) -> str:
    if side.estimate is None:
        return f"• *{side.label}*: {side.error or 'no answer'}"
    plan, est = side.plan, side.estimate
    head = short_gpu(plan.verdict) if plan is not None and plan.verdict else f"{gb(est.total_bytes)} per GPU"
    comp = plan.compute if plan is not None and plan.compute is not None else est.compute
    time = f"; {comp.days:,.1f} days, {comp.gpu_hours:,.0f} GPU-hours" if comp is not None else ""
    if plan is None or not plan.verdict:
        return f"• *{side.label}*: {head}{time}"
    return f"• *{side.label}*: {head} ({gb(side.per_gpu)} per GPU{time})"


def _tflops(side: Side) -> float:
    if side.plan is None or not side.plan.gpu_id:
        return 0.0
    gpu = find_gpu(side.plan.gpu_id)
    return gpu.bf16_dense_tflops or gpu.fp16_dense_tflops


def winner(field: str | None, sides: list[Side]) -> str | None:
    """'Only X fits', 'Fewer GPUs needed: X', 'X is faster', 'Less memory per GPU: X'."""
    ok = [s for s in sides if s.estimate is not None]
    if len(ok) < 2:
        return None
    fitting = [s for s in ok if s.fits]
    if 0 < len(fitting) < len(ok):
        return f"Only *{fitting[0].label}* fits" if len(fitting) == 1 else None
    counts = {s.gpus for s in ok}
    if len(counts) > 1:
        best = min(ok, key=lambda s: (s.gpus, s.per_gpu))
        return f"Fewer GPUs needed: *{best.label}* ({best.gpus:,.0f})"
    if field == "gpu":
        best = max(ok, key=_tflops)
        return (f"Same GPU count; *{best.label}* is faster "
                f"({_tflops(best):,.0f} bf16 TFLOP/s per GPU)")
    low, high = min(s.per_gpu for s in ok), max(s.per_gpu for s in ok)
    if high - low < 0.01 * high:
        return "About the same memory per GPU"
    best = min(ok, key=lambda s: s.per_gpu)
    return f"Less memory per GPU: *{best.label}* ({gb(best.per_gpu)})"


def compare_reply(parsed: Parsed, sides: list[Side]) -> str:
    what = (parsed.compare_field or "").replace("_", " ")
    lines = [f"*Comparing {what}:*", *(_line(s) for s in sides)]
    verdict = winner(parsed.compare_field, sides)
    if verdict:
        lines.append(verdict)
    first = next((s for s in sides if s.estimate is not None), None)
    if first is not None and first.estimate is not None:
        notes = first.plan.assumptions if first.plan is not None else first.estimate.assumptions
        lines.append(assumptions_line(parsed, notes))
    return safe("\n".join(lines))
