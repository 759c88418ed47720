"""The figures an answer shows, read from the service's JSON: per-GPU bytes by component,
usable memory, whether it fits, the verdict. With a GPU named, the planner's layout (under
``planner``) is what the reply describes, so its figures win over the as-stated ones."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

COMPONENTS = (("weights", "weights"), ("gradients", "gradients"), ("optimizer", "optimizer"),
              ("activations", "activations"), ("kv_cache", "KV cache"),
              ("temporary", "temporary"), ("overhead", "overhead"))


@dataclass(frozen=True, slots=True)
class Figures:
    per_gpu: dict[str, int]
    usable: int | None
    fits: bool | None
    verdict: str | None
    gpus: int | None
    layout: dict[str, Any] | None  # the layout shown: dp, tp, pp, zero_stage, recompute, ...


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def figures(answer: dict[str, Any] | None) -> Figures | None:
    """None when the answer has no per-GPU breakdown (a comparison, or no answer)."""
    if not answer:
        return None
    planner = answer.get("planner") if isinstance(answer.get("planner"), dict) else None
    source = planner if planner and isinstance(planner.get("per_gpu_bytes"), dict) else answer
    per_gpu = source.get("per_gpu_bytes")
    if not isinstance(per_gpu, dict):
        return None
    clean = {k: v for k, v in ((k, _int(v)) for k, v in per_gpu.items()) if v is not None}
    fits = source.get("fits")
    verdict = (planner or {}).get("verdict") or answer.get("verdict") or answer.get("summary")
    return Figures(per_gpu=clean, usable=_int(source.get("gpu_usable_bytes")),
                   fits=fits if isinstance(fits, bool) else None,
                   verdict=verdict if isinstance(verdict, str) else None,
                   gpus=_int((planner or {}).get("gpus")),
                   layout=_layout(source.get("plan")))


def _layout(plan: Any) -> dict[str, Any] | None:
    return plan if isinstance(plan, dict) else None


def table(f: Figures) -> str:
    """The per-component table, monospaced, in decimal GB: what a person reads at a glance."""
    rows = [(label, f.per_gpu[key]) for key, label in COMPONENTS if f.per_gpu.get(key)]
    total = f.per_gpu.get("total", sum(v for _, v in rows))
    lines = [f"{label:<12}{value / 1e9:>9,.1f} GB" for label, value in rows]
    lines.append("-" * 24)
    line = f"{'total':<12}{total / 1e9:>9,.1f} GB"
    if f.usable:
        line += f"  of {f.usable / 1e9:,.1f} GB usable ({total / f.usable:.0%})"
    lines.append(line)
    return "```" + "\n".join(lines) + "```"
