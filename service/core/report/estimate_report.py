"""Estimates as plain data (the API's JSON shape) and as text for a terminal."""

from __future__ import annotations

from typing import Any

from service.core.compute.training_time import ComputeEstimate
from service.core.memory.breakdown import COMPONENT_KEYS, Estimate
from service.core.units import gb, gb_and_gib, human_count

LABELS = {
    "weights": "Weights", "gradients": "Gradients", "optimizer": "Optimizer state",
    "activations": "Activations", "kv_cache": "KV cache", "temporary": "Temporary buffers",
    "overhead": "Framework overhead",
}


def summary(est: Estimate) -> str:
    """One line a person reads first: what, how much per GPU, and whether it fits."""
    lay = est.layout
    what = {"train": "training", "finetune": "fine-tuning", "infer": "serving"}[est.task]
    setup = f"{lay.get('gpus', 1)} GPU" + ("s" if lay.get("gpus", 1) != 1 else "")
    if est.task != "infer" and lay.get("zero_stage"):
        setup += f", ZeRO-{lay['zero_stage']}"
    head = f"{est.model_id} {what} on {setup}: {gb_and_gib(est.total_bytes)} per GPU"
    if est.fits is None or est.capacity_bytes is None:
        return head + " (no GPU chosen)"
    room = est.headroom_bytes or 0
    if est.fits:
        return head + f"; fits {est.gpu_name} ({gb(est.capacity_bytes)} usable, {gb(room)} spare)"
    return head + f"; does not fit {est.gpu_name}: {gb(-room)} over its {gb(est.capacity_bytes)}"


def estimate_to_dict(est: Estimate) -> dict[str, Any]:
    """The JSON body of an estimate: integer bytes, formulas, assumptions (API contract)."""
    out: dict[str, Any] = {
        "model": est.model_id,
        "task": est.task,
        "params_total": est.params_total,
        "params_active": est.params_active,
        "params_trainable": est.params_trainable,
        "per_gpu_bytes": est.per_gpu_bytes,
        "gpu": est.gpu_id,
        "gpu_usable_bytes": est.capacity_bytes,
        "fits": est.fits,
        "headroom_bytes": est.headroom_bytes,
        "plan": est.layout,
        "min_gpus": None,  # the planner's fewest GPUs (service.answers.build_answer fills it)
        "cpu_offload_bytes": est.cpu_offload_bytes,
        "summary": summary(est),
        "assumptions": est.assumptions,
        "formulas": [
            {"component": c.key, "bytes": c.bytes, "formula": c.formula, "values": c.values,
             "source": c.source, **({"note": c.note} if c.note else {})}
            for c in est.components
        ],
        "details": est.extra,
        "compute": None,
        "units": "bytes; GB = 10^9 bytes, GiB = 2^30 bytes",
    }
    out["compute"] = compute_to_dict(est.compute)
    return out


def compute_to_dict(c: ComputeEstimate | None) -> dict[str, Any] | None:
    """Training FLOPs, time, GPU-hours and cost as JSON (None without ``tokens``)."""
    if c is None:
        return None
    return {"flops_per_token": c.flops_per_token, "total_flops": c.total_flops,
            "seconds": c.seconds, "days": c.days, "gpu_hours": c.gpu_hours, "cost_usd": c.cost,
            "compute_optimal_tokens": c.compute_optimal_tokens, "formula": c.formula}


def estimate_to_text(est: Estimate) -> str:
    """A readable breakdown: component table (GB and GiB), formulas, assumptions."""
    lines = [summary(est), ""]
    params = f"Parameters: {human_count(est.params_total)} total"
    if est.params_active != est.params_total:
        params += f", {human_count(est.params_active)} active per token"
    if est.task != "infer":
        params += f", {human_count(est.params_trainable)} trainable"
    lines += [params, "", f"{'Per GPU':<20}{'GB':>10}{'GiB':>10}  formula"]
    for key in COMPONENT_KEYS:
        comps = [c for c in est.components if c.key == key]
        if not comps:
            continue
        total = sum(c.bytes for c in comps)
        lines.append(f"{LABELS[key]:<20}{total / 1e9:>10.2f}{total / 2**30:>10.2f}  "
                     f"{comps[0].formula}")
        for c in comps:
            lines.append(f"{'':<42}= {c.values}  [{c.source}]")
    lines.append(f"{'Total':<20}{est.total_bytes / 1e9:>10.2f}{est.total_bytes / 2**30:>10.2f}")
    if est.cpu_offload_bytes:
        lines.append(f"CPU memory per GPU for offload: {gb(est.cpu_offload_bytes)}")
    for key in ("max_concurrent_sequences", "grad_accum"):
        if key in est.extra:
            lines.append(f"{key.replace('_', ' ')}: {est.extra[key]}")
    if est.compute is not None:
        comp = est.compute
        cost = f", ${comp.cost:,.0f}" if comp.cost is not None else ""
        lines += ["", f"Compute: {comp.total_flops:.3g} FLOPs ({comp.formula}); "
                      f"{comp.days:,.1f} days, {comp.gpu_hours:,.0f} GPU-hours{cost}; "
                      f"compute-optimal tokens ~{comp.compute_optimal_tokens:.3g} (20 x N)"]
    if est.assumptions:
        lines += ["", "Assumptions:"] + [f"  - {a}" for a in est.assumptions]
    lines.append("GB = 10^9 bytes, GiB = 2^30 bytes.")
    return "\n".join(lines)
