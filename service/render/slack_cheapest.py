"""The reply to "which GPU?" and "cheaper option?": the job on the catalog's GPU types, the
cheapest per hour first (catalog list prices, ``service/data/gpus.json``); on a named cloud only
its GPUs, each as the instances that hold the GPUs (``service/data/clouds.json``)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from service.core.compute.time_cost import gpu_hours_on
from service.core.hardware.clouds import Instances, cloud_name, instances_for
from service.core.hardware.gpus import find_gpu
from service.core.report.answer_types import Answer, FitsOnEntry
from service.core.units import gb
from service.render.slack_reply import LAYOUT_FIELDS, assumptions_lines, safe, short_gpu

CHEAPEST_SHOWN = 3


@dataclass(frozen=True, slots=True)
class _Row:
    entry: FitsOnEntry
    per_hour: float  # what the GPUs rented cost an hour (a whole instance on a cloud)
    instances: Instances | None
    run_cost: float | None = None  # with training tokens: the whole run on these GPUs

    @property
    def whose(self) -> str:
        if self.instances is not None and self.instances.usd_per_hour is not None:
            return "on-demand"
        return "at catalog prices"

    def what(self) -> str:
        gpus = f"{self.entry.gpus}x {short_gpu(self.entry.name)}"
        if self.instances is None:
            return gpus
        extra = self.instances.gpus - (self.entry.gpus or 0)
        spare = f", {extra} spare" if extra > 0 else ""
        return f"{gpus} ({self.instances.describe()}{spare})"


def _rows(answer: Answer, cloud: str | None) -> list[_Row]:
    rows = []
    for entry in answer.fits_on:
        if not entry.gpus or entry.price_per_hour_usd is None:
            continue
        if cloud is None:
            rows.append(_Row(entry, entry.price_per_hour_usd, None))
            continue
        held = instances_for(cloud, entry.gpu, entry.gpus)
        if held is not None:  # the instances are paid whole: the cloud's price where recorded
            price = held.on_demand_usd_per_hour
            if price is None:
                price = entry.price_per_hour_usd / entry.gpus * held.gpus
            rows.append(_Row(entry, price, held))
    compute = answer.compute
    if compute is not None:  # a run of stated tokens: the cheapest run, not the cheapest hour
        rows = [replace(r, run_cost=_run_cost(r, compute.total_flops)) for r in rows]
        return sorted(rows, key=lambda r: (r.run_cost is None, r.run_cost or 0.0, r.per_hour))
    return sorted(rows, key=lambda r: (r.per_hour, r.entry.gpus or 0))


def _run_cost(row: _Row, total_flops: float) -> float | None:
    hours = gpu_hours_on(find_gpu(row.entry.gpu), total_flops)
    return hours / (row.entry.gpus or 1) * row.per_hour if hours is not None else None


def cheapest_entry(answer: Answer, cloud: str | None = None) -> FitsOnEntry | None:
    """The row the reply leads with: where a thread goes on ("and the sglang command?")."""
    rows = _rows(answer, cloud)
    return rows[0].entry if rows else None


def cheapest_option(answer: Answer, cloud: str | None = None) -> str | None:
    """'2x A100 80GB SXM (≈$3.58/h)': the cheapest row, for a line about another setup."""
    rows = _rows(answer, cloud)
    return f"{rows[0].what()} (~${rows[0].per_hour:,.2f}/h)" if rows else None


def cheapest_reply(answer: Answer, notes: list[str], cloud: str | None = None) -> str:
    rows = _rows(answer, cloud)
    where = f" on {cloud_name(cloud)}" if cloud is not None else ""
    if not rows:
        lines = [f"*{answer.model} fits no GPU type{where} of the catalog that has a list price*"]
    else:
        best = rows[0]
        run = f", ≈${best.run_cost:,.0f} for the run" if best.run_cost is not None else ""
        lines = [f"*Cheapest {'run' if run else 'per hour'}{where} for {answer.model}: "
                 f"{best.what()} (~${best.per_hour:,.2f}/h {best.whose}{run})*"]
        lines += [f"• {r.what()}: ~${r.per_hour:,.2f}/h {r.whose}"
                  + (f", ≈${r.run_cost:,.0f} for the run" if r.run_cost is not None else "")
                  + f", {gb(r.entry.per_gpu_total or 0)} per GPU, {r.entry.layout}"
                  for r in rows[:CHEAPEST_SHOWN]]
        if best.run_cost is not None:
            lines.append("The run's cost: its FLOPs at each GPU's bf16 peak and the catalog's "
                         "default MFU, times the GPUs' price per hour (more GPUs finish sooner "
                         "for about the same cost)")
        lines.append(("On-demand: the cloud's own price of the whole instances "
                      "(service/data/clouds.json); catalog prices: the catalog's per-GPU price "
                      "for every GPU of the instances" if cloud else
                      "Catalog list prices per GPU-hour")
                     + "; the report link lists every GPU type.")
    # each row has its own layout: the request's layout defaults would contradict them
    lines += assumptions_lines(notes, [a for a in answer.assumptions
                                       if a.origin == "stated" or a.field not in LAYOUT_FIELDS])
    return safe("\n".join(lines))
