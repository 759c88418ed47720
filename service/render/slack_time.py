"""The time and cost line of a training answer: days (a range on the default MFU), cost,
GPU-hours and FLOPs; with no GPU count, the GPU-hours lead."""

from __future__ import annotations

from service.core.report.answer_types import ComputeEntry
from service.render.assumption_text import mfu_range


def _duration(days: float) -> str:
    if days >= 1:
        return f"{days:,.1f} days"
    return f"{days * 24:,.1f} hours" if days * 24 >= 1 else f"{days * 1440:,.0f} minutes"


# a month of wall-clock time: what "how many GPUs to finish" is quoted against without a count
MONTH_DAYS = 30


def time_line(c: ComputeEntry, count_stated: bool = True, fits: bool = True,
              planned: bool = True) -> str:
    """'*4.8 days* · *≈$73,000* on 256 GPUs · 29,500 GPU-hours · 4.2e+22 FLOPs'. With no count
    stated the GPU-hours lead: the count is then only the fewest that hold the job, and its days
    (11,981 on 2 H100s for a 15T-token 8B) say nothing a budget needs. ``planned``: the count
    is the planner's (a GPU type was named); else it is the request's one GPU, which need not
    hold the job."""
    cost = f" · *≈${c.cost_usd:,.0f}*" if c.cost_usd is not None else ""
    plural = "s" if c.gpus != 1 else ""
    took = _duration(c.days)
    if count_stated:
        if c.days_range:  # the default MFU: the days at the spread around it
            low, high = _duration(c.days_range[0]), _duration(c.days_range[1])
            if low.split()[1] == high.split()[1]:
                low = low.split()[0]
            took += f" ({mfu_range(low, high)})"
        line = (f"*{took}*{cost} on {c.gpus:,} GPU{plural} · {c.gpu_hours:,.0f} "
                f"GPU-hours · {c.total_flops:.2g} FLOPs")
    else:
        hours = f"{c.gpu_hours:,.0f} GPU-hours"
        if c.days_range:
            low_h, high_h = (c.gpu_hours * d / c.days for d in c.days_range)
            hours += f" ({mfu_range(f'{low_h:,.0f}', f'{high_h:,.0f}')})"
        on = f"the {c.gpus:,} GPU{plural} that hold it" if planned else \
            f"{c.gpus:,} GPU{plural} (name a GPU for the count that holds it)"
        line = f"*{hours}*{cost} · {c.total_flops:.2g} FLOPs · no GPU count given: {took} on {on}"
        if c.days > MONTH_DAYS:
            month = -(-c.gpu_hours // (MONTH_DAYS * 24))
            line += (f", {MONTH_DAYS} days on about {month:,.0f} (time scales as 1/GPUs at the "
                     "same MFU; large clusters often run lower)")
    if c.cost_usd is None:  # the catalog has no price for this GPU
        line += " · no catalog price for this GPU: say one (e.g. `$3.50/h`) for the cost"
    if not fits:
        line += " · if it fit as the leanest layout: the fix below adds its own step time"
    return line
