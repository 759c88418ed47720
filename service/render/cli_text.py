"""The answer as terminal text: verdict first, the component table with each formula and its
numbers, the layout, why, options, time and cost, the fits-on table, the assumptions."""

from __future__ import annotations

from service.core.report.answer_types import (
    Answer,
    ComputeEntry,
    FormulaEntry,
    LayoutEntry,
    PlannerEntry,
)
from service.core.report.headline import (
    fix_label,
    own_figures,
    own_layout_label,
    speaks_of_planner,
    top_figures,
)
from service.core.units import counted, gb, human_count
from service.render.assumption_text import assumption_line, mfu_range

LABELS = {
    "weights": "Weights", "gradients": "Gradients", "optimizer": "Optimizer state",
    "activations": "Activations", "kv_cache": "KV cache", "temporary": "Temporary buffers",
    "overhead": "Framework overhead",
}
UNITS_LINE = "GB = 10^9 bytes, GiB = 2^30 bytes."


def layout_text(plan: LayoutEntry) -> str:
    """'dp=4 tp=1 pp=1 cp=1, ZeRO-3, recompute full, micro-batch 1 x 1 accumulation'."""
    if plan.context is not None:
        replicas = f"{plan.dp} replicas of " if plan.dp > 1 else ""
        split = f"DP={plan.dp} attention + EP={plan.ep}" if plan.ep > 1 \
            else f"{replicas}TP={plan.tp}, PP={plan.pp}"
        return (f"{split} on {counted(plan.gpus, 'GPU')}; context "
                f"{plan.context:,} tokens, {counted(plan.sequences or 0, 'sequence')}")
    text = (f"dp={plan.dp} tp={plan.tp} pp={plan.pp} cp={plan.cp}"
            + (f" ep={plan.ep}" if plan.ep > 1 else "")
            + f", ZeRO-{plan.zero_stage}, recompute {plan.recompute}, micro-batch "
            f"{plan.micro_batch} x {plan.grad_accum} accumulation")
    if plan.global_batch:
        text += f" (global batch {plan.global_batch})"
    if plan.sequence_parallel:
        text += ", sequence parallel"
    if plan.offload != "none":
        text += f", offload {plan.offload}"
    return text


def breakdown_lines(formulas: list[FormulaEntry], total: int, of: str) -> list[str]:
    """One row per component; a component kind that comes more than once (weights and their
    16-bit copies, several temporary buffers) says which one in its formula line."""
    lines = [f"{'Per GPU':<20}{'GB':>10}{'GiB':>10}  formula"]
    repeated = {f.component for f in formulas if sum(g.component == f.component
                                                     for g in formulas) > 1}
    for item in formulas:
        which = f"{item.note}: " if item.component in repeated and item.note else ""
        lines.append(f"{LABELS.get(item.component, item.component):<20}"
                     f"{item.bytes / 1e9:>10.2f}{item.bytes / 2**30:>10.2f}  "
                     f"{which}{item.expression}")
        lines.append(f"{'':<42}= {item.values}  [{item.source}]")
    lines.append(f"{'Total':<20}{total / 1e9:>10.2f}{total / 2**30:>10.2f}{of}")
    return lines


def _compute_lines(title: str, c: ComputeEntry | None) -> list[str]:
    if c is None:
        return []
    cost = f", ${c.cost_usd:,.0f}" if c.cost_usd is not None else ""
    return [f"{title}: {c.total_flops:.3g} FLOPs ({c.formula}); {c.seconds:,.3g} s = "
            f"{c.days:,.1f} days on {counted(c.gpus, 'GPU')}"
            + (f" ({mfu_range(f'{c.days_range[0]:,.1f}', f'{c.days_range[1]:,.1f}')})"
               if c.days_range else "") + f", {c.gpu_hours:,.0f} GPU-hours{cost}"]


def _planner_lines(p: PlannerEntry, band_line: str | None, fix: str = "Fix") -> list[str]:
    """``band_line``: the error band, when it is about the planner's layout."""
    title = "fewest GPUs of this type" if p.mode == "fewest" else "the given GPUs"
    lines = [f"Planner ({title}): {p.verdict}"]
    if p.stack_name:
        lines.append(f"Stack: {p.stack_name}")
    if p.layout is not None:
        head = "Layout" if p.fits else "Leanest layout tried (does not fit)"
        lines.append(f"{head}: {layout_text(p.layout.plan)}")
        lines += breakdown_lines(p.layout.formulas, p.layout.per_gpu_bytes.total,
                                 f"   of a {gb(p.budget_bytes)} budget")
        if band_line is not None:
            lines.append(band_line)
    if p.why:
        lines += ["Why:"] + [f"  - {w}" for w in p.why]
    if p.alternatives:
        lines += ["Alternatives:"] + [f"  - {a.gpus} GPUs, {a.layout}: {a.reason}"
                                      for a in p.alternatives]
    if p.fix is not None:
        lines.append(f"{fix}: {p.fix.change}\n  costs: {p.fix.note}")
        lines += [f"  or: {f.change}\n  costs: {f.note}" for f in p.other_fixes]
    return lines


def _seed_lines(p: PlannerEntry | None) -> list[str]:
    if p is None or not p.seed_counts:
        return []
    lines = ["The S3 seed's even-split counts (its method, on request):"]
    for s in p.seed_counts:
        lines.append(f"  - {s.label}" + ("" if s.reasons else ": runs as stated"))
        lines += [f"      cannot run as stated: {r}" for r in s.reasons]
    return lines


def _fits_on_lines(answer: Answer) -> list[str]:
    if not answer.fits_on:
        return []
    lines = ["Fits on (fewest GPUs of each type):",
             f"  {'GPU':<34}{'GPUs':>6}{'nodes':>6}{'per GPU':>11}{'budget':>10}{'$/hour':>10}"
             "  layout"]
    for r in answer.fits_on:
        per = gb(r.per_gpu_total) if r.per_gpu_total is not None else "-"
        price = f"{r.price_per_hour_usd:,.2f}" if r.price_per_hour_usd is not None else "-"
        lines.append(f"  {r.name:<34}{r.gpus or '-':>6}{r.nodes or '-':>6}{per:>11}"
                     f"{gb(r.budget_bytes):>10}{price:>10}  {r.layout}")
    return lines


def _launch_lines(answer: Answer) -> list[str]:
    if not answer.launch:
        return []
    stack = answer.planner.stack_name if answer.planner is not None else ""
    return [f"Launch configs{f' ({stack})' if stack else ''}: {', '.join(answer.launch)}; "
            "print one with: fitcheck plan ... --emit <name>"]


def answer_text(answer: Answer) -> str:
    params = f"Parameters: {human_count(answer.params_total)} total"
    if answer.params_active != answer.params_total:
        params += f", {human_count(answer.params_active)} active per token"
    if answer.task != "infer":
        params += f", {human_count(answer.params_trainable)} trainable"
    of = f"   of {gb(answer.gpu_usable_bytes)} usable ({answer.gpu_name})" \
        if answer.gpu_usable_bytes else ""
    # where the verdict is the planner's layout on the given GPUs, so is the band: it goes
    # under that layout's breakdown, and the request's own layout is labelled as stated
    planners = speaks_of_planner(answer) and answer.planner is not None \
        and answer.planner.layout is not None
    # the request's own layout first where the planner's comes below, else the top level's
    first = own_figures(answer) if planners else top_figures(answer)
    sections: list[list[str]] = [
        [answer.verdict],
        _seed_lines(answer.planner),
        [params, (f"{own_layout_label(answer)}: " if planners else "Layout: ")
         + layout_text(first.plan)],
        breakdown_lines(first.formulas, first.per_gpu_bytes.total, of),
    ]
    band = answer.error_band
    band_line = (f"Likely between {gb(band.low_bytes)} and {gb(band.high_bytes)} per GPU"
                 + (f" ({band.verdict.replace('_', ' ')})" if band.verdict else "")
                 + ("" if planners else f"; peak at: {answer.peak_phase}")
                 + f"; band: {band.basis}")
    if not planners:
        sections[-1].append(band_line)
    if answer.cpu_offload_bytes:
        sections[-1].append(f"CPU memory per GPU for offload: {gb(answer.cpu_offload_bytes)}")
    if answer.plan.max_concurrent_sequences is not None:
        sections[-1].append(f"max concurrent sequences: {answer.plan.max_concurrent_sequences:,}")
    if answer.planner is not None:
        sections.append(_planner_lines(answer.planner, band_line if planners else None,
                                       fix_label(answer)))
    compute = _compute_lines("Compute", answer.compute) + \
        _compute_lines("Textbook 6ND", answer.compute_6nd)
    if answer.compute is not None:
        compute.append(f"Compute-optimal data ~{answer.compute.compute_optimal_tokens:.3g} tokens "
                       "(20 x params, Hoffmann et al. 2022)")
    if answer.serving_cost is not None:
        c = answer.serving_cost
        compute.append(f"Serving cost: {c.gpus} GPUs x ${c.price_per_gpu_hour_usd:,.2f}/h = "
                       f"${c.per_hour_usd:,.2f}/h, ${c.per_month_usd:,.0f} per {c.hours_per_month:,.0f}"
                       f"-hour month ({'stated' if c.price_stated else 'catalog'} price)")
    sections += [compute, _fits_on_lines(answer), _launch_lines(answer)]
    sections.append(["Assumptions:"] + [f"  - {assumption_line(a)}" for a in answer.assumptions])
    sections.append([UNITS_LINE])
    return "\n\n".join("\n".join(s) for s in sections if s)
