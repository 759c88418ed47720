"""'How many A100s and for how much per hour?' about a training job with no token count (so no
run time or total): the layout's GPUs x the price per GPU-hour (stated, or the catalog's
on-demand price; ``build_answer.gpus_cost``, as serving's cost), said as such (held-out set 28:
a budget question for management had no price)."""

from __future__ import annotations

from typing import Any

from service.core.hardware.gpus import find_gpu
from service.core.report.answer_types import Answer
from service.core.report.build_answer import gpus_cost


def hourly_line(merged: dict[str, Any], answer: Answer) -> str | None:
    if answer.task == "infer" or answer.compute is not None or answer.gpu is None:
        return None
    planner = answer.planner
    gpus = planner.layout.plan.gpus if planner is not None and planner.layout is not None \
        else answer.plan.gpus
    stated = merged.get("price_per_gpu_hour")
    cost = gpus_cost(gpus, find_gpu(answer.gpu),
                     float(stated) if isinstance(stated, int | float) else None)
    if cost is None:
        return None
    where = "as stated" if cost.price_stated else "catalog on-demand price"
    return (f"Cost: {gpus} GPUs x ${cost.price_per_gpu_hour_usd:,.2f}/h = "
            f"*${cost.per_hour_usd:,.2f}/h* ({where}), ≈${cost.per_month_usd:,.0f} a month "
            f"({cost.hours_per_month:g} h) if they are kept; the run's total needs its length: "
            "say the tokens or epochs")
