"""The reply for a comparison: one line per side, then which side wins and on what."""

from __future__ import annotations

from dataclasses import dataclass

from service.core.hardware.clouds import cloud_name, instances_for
from service.core.job.resolve import LAYOUT_KNOBS
from service.core.report.answer_types import Answer
from service.core.report.headline import FIX_BELOW
from service.core.units import counted, gb
from service.render.slack_reply import assumptions_lines, safe, short_gpu


@dataclass(frozen=True, slots=True)
class Side:
    label: str
    answer: Answer | None
    error: str | None
    tflops: float = 0.0  # the side's GPU's dense bf16 peak (0: no GPU)
    bandwidth: float = 0.0  # the side's GPU's memory bandwidth, GB/s (0: no GPU)
    mfu: float = 0.0  # the side's GPU's default MFU in the catalog (0: no GPU)

    @property
    def throughput(self) -> float:
        """Useful TFLOP/s per GPU, as the time answers count it: peak x default MFU."""
        return self.tflops * self.mfu

    @property
    def fits(self) -> bool:
        if self.answer is None:
            return False
        planner = self.answer.planner
        return planner.fits if planner is not None else self.answer.fits is not False

    @property
    def gpus(self) -> float:
        if self.answer is None or self.answer.planner is None:
            return 1.0
        planner = self.answer.planner
        return float(planner.min_gpus or planner.gpus or 1e9)

    @property
    def spare(self) -> int:
        """Usable memory the side's layout leaves on each GPU (GPU types differ in size)."""
        usable = self.answer.gpu_usable_bytes if self.answer is not None else None
        return (usable or 0) - self.per_gpu

    @property
    def room(self) -> int | None:
        """Serving: the sequences the side's layout holds at once on the given GPUs."""
        if self.answer is None or self.answer.task != "infer":
            return None
        room = self.answer.details.get("max_concurrent_sequences")
        return int(room) if isinstance(room, int | float) else None

    @property
    def per_gpu(self) -> int:
        if self.answer is None:
            return 0
        planner = self.answer.planner
        if planner is not None and planner.layout is not None:
            return planner.layout.per_gpu_bytes.total
        return self.answer.per_gpu_bytes.total


def _line(side: Side) -> str:
    answer = side.answer
    if answer is None:
        return f"• *{side.label}*: {side.error or 'no answer'}"
    comp = answer.compute
    time = f"; {comp.days:,.1f} days, {comp.gpu_hours:,.0f} GPU-hours" if comp is not None else ""
    if comp is not None and comp.cost_usd is not None:
        time += f", ≈${comp.cost_usd:,.0f}"
    if answer.planner is None:
        return f"• *{side.label}*: {gb(answer.per_gpu_bytes.total)} per GPU{time}"
    verdict = short_gpu(answer.planner.verdict).replace(FIX_BELOW, "; a change on these GPUs fits")
    if not side.fits and FIX_BELOW in answer.planner.verdict:  # its verdict says what it needs
        return f"• *{side.label}*: {verdict}" + (f" ({time[2:]})" if time else "")
    return f"• *{side.label}*: {verdict} ({gb(side.per_gpu)} per GPU{time})"


def winner(field: str | None, sides: list[Side]) -> str | None:
    """'Only X fits', 'Fewer GPUs needed: X', 'X is faster', 'Less memory per GPU: X'."""
    ok = [s for s in sides if s.answer is not None]
    if len(ok) < 2:
        return None
    fitting = [s for s in ok if s.fits]
    if 0 < len(fitting) < len(ok):
        return f"Only *{fitting[0].label}* fits" if len(fitting) == 1 else None
    on_given = _none_fits_on_the_given_gpus(ok) if not fitting else \
        _both_fit_on_the_given_gpus(ok) or _serving_on_the_given_gpus(ok)
    if on_given:
        return on_given
    counts = {s.gpus for s in ok}
    if len(counts) > 1:
        best = min(ok, key=lambda s: (s.gpus, s.per_gpu))
        return f"Fewer GPUs needed: *{best.label}* ({best.gpus:,.0f})"
    if field == "gpu" and all(s.answer is not None and s.answer.task == "infer" for s in ok):
        # decoding reads every weight and the KV cache per token: memory bandwidth sets its pace
        best = max(ok, key=lambda s: s.bandwidth)
        return (f"Same GPU count; *{best.label}* decodes faster "
                f"({best.bandwidth:,.0f} GB/s of memory bandwidth per GPU)")
    if field == "gpu":
        best = max(ok, key=lambda s: s.tflops)
        return (f"Same GPU count; *{best.label}* is faster "
                f"({best.tflops:,.0f} bf16 TFLOP/s per GPU)")
    low, high = min(s.per_gpu for s in ok), max(s.per_gpu for s in ok)
    if high - low < 0.01 * high:
        return "About the same memory per GPU"
    best = min(ok, key=lambda s: s.per_gpu)
    return f"Less memory per GPU: *{best.label}* ({gb(best.per_gpu)})"


def _none_fits_on_the_given_gpus(sides: list[Side]) -> str | None:
    """On GPUs the question names, where no side fits: which comes closest and the change that
    makes it fit there ("fewer GPUs needed" would name a side that does not fit either)."""
    planners = [s.answer.planner if s.answer is not None else None for s in sides]
    given = [(s, p) for s, p in zip(sides, planners, strict=True)
             if p is not None and p.mode == "given" and p.shortfall_bytes is not None]
    if len(given) != len(sides) or len({p.gpus for _, p in given}) != 1:
        return None
    side, planner = min(given, key=lambda sp: sp[1].shortfall_bytes or 0)
    none = "Neither" if len(sides) == 2 else "None"
    short = planner.shortfall_bytes or 0
    tied = all(abs((p.shortfall_bytes or 0) - short) <= 0.005 * max(short, 1) for _, p in given)
    line = f"{none} fits on {counted(planner.gpus or 1, 'GPU')} as asked; " + (
        f"each is {gb(short)} short" if tied else
        f"*{side.label}* comes closest ({gb(short)} short)")
    if planner.fix is not None:
        line += f". Fix: {planner.fix.change}"
    return line


def _serving_on_the_given_gpus(sides: list[Side]) -> str | None:
    """Serving on GPUs the question names, every side fitting: the one that holds the most
    sequences at once ("TP=4 or 2 replicas of TP=2" on 4 H100s: 117 against 10), not the one
    whose own fewest count is lower."""
    planners = [s.answer.planner if s.answer is not None else None for s in sides]
    rooms = [s.room for s in sides]
    if not all(p is not None and p.mode == "given" and p.fits for p in planners) \
            or any(r is None for r in rooms):
        return None
    best = max(sides, key=lambda s: s.room or 0)
    rest = ", ".join(f"{s.room or 0:,}" for s in sides if s is not best)
    costs = [s.answer.serving_cost.per_hour_usd if s.answer is not None
             and s.answer.serving_cost is not None else None for s in sides]
    priced = "; " + ", ".join(f"{s.label} ≈${c:,.2f}/h" for s, c in zip(sides, costs, strict=True)) \
        if all(c is not None for c in costs) else ""
    counts = {p.gpus for p in planners if p}
    if len(counts) == 1:
        gpus = next(iter(counts)) or 1
        return (f"Each serves it on {counted(gpus, 'GPU')}; *{best.label}* holds the most at "
                f"once: {best.room or 0:,} sequences, against {rest}{priced}")
    # other counts of other cards ("4x A100 80GB vs 2x H200"): room, speed and price side by side
    fast = max(sides, key=lambda s: s.bandwidth)
    return (f"*{best.label}* holds the most at once: {best.room or 0:,} sequences, against "
            f"{rest}; *{fast.label}* decodes fastest ({fast.bandwidth:,.0f} GB/s of memory "
            f"bandwidth per GPU){priced}")


def _both_fit_on_the_given_gpus(sides: list[Side]) -> str | None:
    """On GPUs the question names, where every side fits, the faster side (the planner's
    relative step time), and which leaves more memory: "fewer GPUs needed" would answer another
    question."""
    planners = [s.answer.planner if s.answer is not None else None for s in sides]
    if not all(p is not None and p.mode == "given" and p.fits and p.relative_step_time
               for p in planners):
        return None
    times = {s.label: p.relative_step_time for s, p in zip(sides, planners, strict=True)
             if p is not None and p.relative_step_time}
    gpus = {p.gpus for p in planners if p is not None}
    if len(gpus) != 1 or len(times) != len(sides):
        return None
    if all(s.throughput for s in sides) and len({s.throughput for s in sides}) > 1:
        # other GPU types: the step takes the layout's relative time at the GPU's own pace
        times = {s.label: times[s.label] / s.throughput for s in sides}
    fast = min(sides, key=lambda s: times[s.label])
    roomy = max(sides, key=lambda s: s.spare)
    slow_side = max(sides, key=lambda s: times[s.label])
    slow = times[slow_side.label]
    line = f"Each fits on {counted(next(iter(gpus)) or 1, 'GPU')}; "
    if slow - times[fast.label] <= 1e-3 * slow:
        line += "about as fast"
    elif fast.throughput and slow_side.throughput and fast.throughput != slow_side.throughput:
        line += (f"*{fast.label}* is faster: about {slow / times[fast.label]:.1f}x the "
                 f"throughput ({fast.tflops:,.0f} bf16 TFLOP/s per GPU at {fast.mfu:.0%} MFU "
                 f"against {slow_side.tflops:,.0f} at {slow_side.mfu:.0%}, the catalog's "
                 "defaults)")
    else:
        line += (f"*{fast.label}* is faster (step time x{times[fast.label]:.2f} against "
                 f"x{slow:.2f})")
    if roomy.label != fast.label:
        line += f"; *{roomy.label}* leaves the most memory ({gb(roomy.spare)} spare per GPU)"
    return line


def cheaper_run(sides: list[Side]) -> str | None:
    """'The run costs less on *B200*: ≈$98,000 against ≈$114,600': GPU types priced for a run of
    stated tokens (each at its own price per GPU-hour: stated, else the catalog's)."""
    runs = [(s.label, s.answer.compute) for s in sides
            if s.fits and s.answer is not None and s.answer.compute is not None]
    costs = [(label, c.cost_usd, c.cost_usd / c.gpu_hours) for label, c in runs
             if c.cost_usd is not None and c.gpu_hours > 0]
    if len(costs) < 2 or len(costs) != len(sides):
        return None
    ranked = sorted(costs, key=lambda item: item[1])
    prices = " and ".join(f"${price:,.2f}" for _, _, price in ranked)
    (cheap, low, _), high = ranked[0], ranked[-1][1]
    if high - low <= 0.01 * high:
        return f"The run costs about the same on each (≈${low:,.0f}; {prices} per GPU-hour)"
    others = ", ".join(f"≈${cost:,.0f}" for _, cost, _ in ranked[1:])
    return (f"The run costs less on *{cheap}*: ≈${low:,.0f} against {others} ({prices} per "
            "GPU-hour)")


def cloud_line(sides: list[Side], cloud: str) -> str | None:
    """'On AWS: g5.12xlarge ~$5.67/h on-demand; g6e.xlarge ~$1.86/h on-demand': each side's GPUs
    as that cloud's instances (``service/data/clouds.json``)."""
    parts = []
    for side in sides:
        answer = side.answer
        if answer is None or answer.gpu is None or not side.fits:
            continue
        held = instances_for(cloud, answer.gpu, int(side.gpus))
        if held is None:
            continue
        on_demand = held.on_demand_usd_per_hour
        price = f"~${on_demand:,.2f}/h on-demand" if on_demand is not None else "no recorded price"
        parts.append(f"*{side.label}*: {held.describe()} {price}")
    return f"On {cloud_name(cloud)}: " + "; ".join(parts) if len(parts) > 1 else None


def compare_reply(field: str | None, sides: list[Side], notes: list[str],
                  cloud: str | None = None) -> str:
    what = (field or "").replace("_", " ")
    lines = [f"*Comparing {what}:*", *(_line(s) for s in sides)]
    verdict = winner(field, sides)
    if verdict:
        lines.append(verdict)
    cheaper = cheaper_run(sides) if field == "gpu" else None
    if cheaper:
        lines.append(cheaper)
    rented = cloud_line(sides, cloud) if cloud and field == "gpu" else None
    if rented:
        lines.append(rented)
    first = next((s.answer for s in sides if s.answer is not None), None)
    if first is not None:
        # the compared field is in every side's label, not one side's "you said"; a layout knob
        # the planner chose is in every side's line, not the first side's default
        # GPU sides with their own counts carry the count too
        own = {field, "gpu_count", "nodes"} if field == "gpu" else {field}
        kept = [a for a in first.assumptions if a.field not in own
                and (a.origin == "stated" or a.field not in LAYOUT_KNOBS or not _planned(sides))]
        lines += assumptions_lines(notes, kept)
    return safe("\n".join(lines))


def _planned(sides: list[Side]) -> bool:
    """Whether the sides' lines are the planner's layouts (which say their own knobs)."""
    return any(s.answer is not None and s.answer.planner is not None for s in sides)
