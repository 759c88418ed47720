"""The report's headline: one verdict, where the real peak likely is (the error band) and what
that means against the GPU, the software the plan is for, and what the fewest GPUs means."""

from __future__ import annotations

from html import escape

from service.core.report.answer_types import Answer
from service.core.report.headline import speaks_of_planner
from service.web.layout import gb

BAND_WORDS = {"fits": "fits", "borderline": "borderline", "does_not_fit": "does not fit"}


def verdict_kind(answer: Answer) -> str:
    """fits, borderline, does_not_fit, or '' (no GPU: nothing to fit)."""
    if speaks_of_planner(answer) and answer.planner is not None:
        return "fits" if answer.planner.fits else "does_not_fit"
    if answer.error_band.verdict is not None:
        return answer.error_band.verdict
    if answer.fits is None:
        return ""
    return "fits" if answer.fits else "does_not_fit"


def tag(kind: str) -> str:
    return f"<span class='tag {kind}'>{BAND_WORDS.get(kind, kind)}</span>" if kind else ""


def _band(answer: Answer) -> str:
    band = answer.error_band
    span = f"<strong>{gb(band.low_bytes)} – {gb(band.high_bytes)}</strong>"
    against = (f" against {gb(answer.gpu_usable_bytes)} usable"
               if answer.gpu_usable_bytes is not None else "")
    # the band is the verdict's layout's (core/report/build_answer.py)
    return (f"<p id=band>Likely peak: {span} per GPU{against} {tag(band.verdict or '')}</p>"
            f"<p class=muted>Error band: {escape(band.basis)}</p>")


def _context(answer: Answer) -> str:
    planner = answer.planner
    bits = []
    if planner is not None and planner.stack_name:
        bits.append(f"Plan for <strong id=stack>{escape(planner.stack_name)}</strong>")
    if planner is not None and planner.mode == "given" and planner.min_gpus:
        name = escape(answer.gpu_name or answer.gpu or "GPU")
        bits.append(f"the fewest {name} that fit this job: <strong>{planner.min_gpus:,}</strong>"
                    f" (this report is for {answer.plan.gpus:,})")
    return f"<p>{'; '.join(bits)}</p>" if bits else ""


def headline(answer: Answer) -> str:
    kind = verdict_kind(answer)
    return (f"<section class='verdict {kind}' id=headline><p class=headline id=verdict>"
            f"{escape(answer.verdict)}</p>{_band(answer)}{_context(answer)}</section>")
