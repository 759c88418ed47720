"""Plans as plain data (JSON) and as text: verdict first, then layout, breakdown, why, options."""

from __future__ import annotations

from typing import Any

from service.core.memory.breakdown import COMPONENT_KEYS, Estimate
from service.core.planning.plan_types import Plan
from service.core.report.estimate_report import LABELS, compute_to_dict
from service.core.units import gb


def plan_to_dict(plan: Plan) -> dict[str, Any]:
    """The planner's answer as JSON: the layout as ``plan`` (dp, tp, pp, cp, zero_stage, ...)."""
    layout: dict[str, Any] | None = plan.serving or None
    if plan.task != "infer":
        layout = plan.layout.to_dict() if plan.layout else None
    est = plan.estimate
    return {
        "task": plan.task, "model": plan.model_id, "gpu": plan.gpu_id or None,
        "gpu_name": plan.gpu_name or None, "mode": plan.mode, "fits": plan.fits,
        "verdict": plan.verdict, "gpus": plan.gpus,
        "nodes": plan.layout.nodes if plan.layout else plan.serving.get("nodes"),
        "min_gpus": plan.min_gpus, "plan": layout,
        "per_gpu_bytes": est.per_gpu_bytes if est else None,
        "gpu_usable_bytes": plan.capacity_bytes or None,
        "budget_bytes": plan.budget_bytes or None, "headroom": plan.headroom,
        "relative_step_time": round(plan.step_time, 4) if plan.step_time else None,
        "why": plan.why,
        "alternatives": [a.to_dict() for a in plan.alternatives],
        "shortfall_bytes": plan.shortfall_bytes,
        "fix": plan.fix.to_dict() if plan.fix else None,
        "other_fixes": [f.to_dict() for f in plan.other_fixes],
        "seed_counts": [s.to_dict() for s in plan.seed_counts],
        "compute": compute_to_dict(plan.compute),
        "compute_6nd": compute_to_dict(plan.compute_6nd),
        "fits_on": [r.to_dict() for r in plan.fits_on],
        "assumptions": plan.assumptions,
        "formulas": [{"component": c.key, "bytes": c.bytes, "formula": c.formula,
                      "values": c.values, "source": c.source} for c in est.components]
        if est else [],
        "units": "bytes; GB = 10^9 bytes, GiB = 2^30 bytes",
    }


def _breakdown(est: Estimate, budget: int) -> list[str]:
    lines = [f"{'Per GPU':<20}{'GB':>9}{'GiB':>9}"]
    for key in COMPONENT_KEYS:
        n = est.component_bytes(key)
        if n:
            lines.append(f"{LABELS[key]:<20}{n / 1e9:>9.2f}{n / 2**30:>9.2f}")
    total = est.total_bytes
    lines.append(f"{'Total':<20}{total / 1e9:>9.2f}{total / 2**30:>9.2f}   of a "
                 f"{gb(budget)} budget")
    return lines


def _layout_line(plan: Plan) -> str:
    if plan.task == "infer":
        s = plan.serving
        return (f"Layout: TP={s['tp']}, PP={s['pp']} on {s['gpus']} GPU(s); "
                f"context {s['context']:,} tokens, {s['sequences']} sequence(s)")
    lay = plan.layout
    assert lay is not None
    title = "Layout" if plan.fits else "Leanest layout tried (does not fit)"
    return (f"{title}: {lay.shape()}, ZeRO-{lay.zero_stage}, recompute {lay.recompute}, "
            f"micro-batch {lay.micro_batch} x {lay.grad_accum} accumulation "
            f"(global batch {lay.global_batch})"
            + (", sequence parallel" if lay.sequence_parallel else "")
            + (f", offload {lay.offload}" if lay.offload != "none" else ""))


def _compute_lines(plan: Plan) -> list[str]:
    lines: list[str] = []
    for title, c in (("Compute", plan.compute), ("Textbook 6ND", plan.compute_6nd)):
        if c is None:
            continue
        cost = f", ${c.cost:,.0f}" if c.cost is not None else ""
        lines.append(f"{title}: {c.total_flops:.3g} FLOPs ({c.formula}); {c.seconds:,.3g} s = "
                     f"{c.days:,.1f} days on {plan.gpus} GPUs, {c.gpu_hours:,.0f} GPU-hours{cost}")
    if plan.compute is not None:
        month = plan.compute.gpu_hours / (30 * 24)
        if plan.compute.days > 30:
            lines.append(f"To finish in 30 days at the same MFU: ~{month:,.0f} GPUs")
        lines.append(f"Compute-optimal data ~{plan.compute.compute_optimal_tokens:.3g} tokens "
                     "(20 x params, Hoffmann et al. 2022)")
    return lines


def _fits_on_lines(plan: Plan) -> list[str]:
    if not plan.fits_on:
        return []
    lines = ["", "Fits on (fewest GPUs of each type):",
             f"  {'GPU':<34}{'GPUs':>6}{'nodes':>6}{'per GPU':>11}{'budget':>10}{'$/hour':>10}"
             "  layout"]
    for r in plan.fits_on:
        per = gb(r.total_bytes) if r.total_bytes is not None else "-"
        price = f"{r.price_per_hour:,.2f}" if r.price_per_hour is not None else "-"
        lines.append(f"  {r.gpu_name:<34}{r.gpus or '-':>6}{r.nodes or '-':>6}{per:>11}"
                     f"{gb(r.budget_bytes):>10}{price:>10}  {r.layout}")
    return lines


def plan_to_text(plan: Plan) -> str:
    lines = [plan.verdict, ""]
    if plan.seed_counts:
        lines.append("The S3 seed's even-split counts (its method, on request):")
        for s in plan.seed_counts:
            lines.append(f"  - {s.label}" + ("" if s.reasons else ": runs as stated"))
            lines += [f"      cannot run as stated: {r}" for r in s.reasons]
        lines.append("")
    if (plan.layout is not None or plan.serving) and plan.gpu_id:
        lines.append(_layout_line(plan))
    if plan.estimate is not None:
        lines += _breakdown(plan.estimate, plan.budget_bytes)
    if plan.why:
        lines += ["", "Why:"] + [f"  - {w}" for w in plan.why]
    if plan.alternatives:
        lines += ["", "Alternatives:"] + [f"  - {a.gpus} GPUs, {a.description}: {a.reason}"
                                          for a in plan.alternatives]
    if plan.fix is not None:
        lines += ["", f"Cheapest fix: {plan.fix.change} ({plan.fix.note})"]
        lines += [f"  or: {f.change} ({f.note})" for f in plan.other_fixes]
    compute = _compute_lines(plan)
    if compute:
        lines += ["", *compute]
    lines += _fits_on_lines(plan)
    if plan.assumptions:
        lines += ["", "Assumptions:"] + [f"  - {a}" for a in plan.assumptions]
    lines.append("GB = 10^9 bytes, GiB = 2^30 bytes.")
    return "\n".join(lines)
