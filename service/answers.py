"""The answer to an estimate request, as the API returns it (plain data; no I/O, no HTTP).

Built on the core's ``estimate`` and ``make_plan``. Which layout the top-level figures describe:

- no GPU: the request as stated (and, with ``fits_on``, the fewest GPUs of every catalog type);
- a GPU but no count (``gpu_count``/``nodes``): the planner's fewest-GPUs layout. ``plan``,
  ``min_gpus``, ``per_gpu_bytes``, ``fits`` and ``formulas`` all describe that layout; the
  request's own (usually one-GPU) layout is kept under ``as_stated``;
- a GPU and a count: the request as stated on that count (``fits`` for it), with the planner's
  best layout for that count under ``planner`` and the fewest GPUs as ``min_gpus``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from service.core.job.request import EstimateRequest
from service.core.memory.breakdown import Estimate
from service.core.memory.estimate_job import estimate
from service.core.planning.entry import make_plan
from service.core.planning.plan_types import Plan
from service.core.report.estimate_report import compute_to_dict, estimate_to_dict
from service.core.report.plan_report import plan_to_dict


@dataclass(frozen=True, slots=True)
class Answer:
    body: dict[str, Any]
    estimate_s: float  # time in the core's estimate
    planner_s: float  # time in the planner (0 when it did not run)
    estimate: Estimate  # the request as stated
    plan: Plan | None  # the planner's answer when a GPU type was given


def build_answer(request: EstimateRequest, fits_on: bool = False) -> Answer:
    """The API's JSON body for a request (without ``link``, which needs the URL)."""
    start = time.perf_counter()
    est = estimate(request)
    middle = time.perf_counter()
    plan = make_plan(request, fits_on=fits_on) if request.gpu is not None or fits_on else None
    end = time.perf_counter()
    return Answer(_body(request, est, plan), middle - start, end - middle if plan else 0.0,
                  est, plan)


def _body(request: EstimateRequest, est: Estimate, plan: Plan | None) -> dict[str, Any]:
    if plan is None:
        body = estimate_to_dict(est)
        body["verdict"] = body["summary"]
        return body
    if plan.mode == "fewest" and plan.estimate is not None:
        body = _fewest(est, plan)
    else:
        body = estimate_to_dict(est)
        body["verdict"] = _verdict(body["summary"], plan)
    if plan.mode != "catalog":
        body["min_gpus"] = plan.min_gpus
        planner = plan_to_dict(plan)
        planner.pop("fits_on", None)
        body["planner"] = planner
    if plan.fits_on:
        body["fits_on"] = [row.to_dict() for row in plan.fits_on]
    return body


def _verdict(summary: str, plan: Plan) -> str:
    if plan.mode == "catalog":
        return f"{summary}. {plan.verdict}"
    if plan.mode == "given":
        return f"As stated: {summary}. Planner on {plan.gpus or 'these'} GPUs: {plan.verdict}"
    return plan.verdict


def _fewest(est: Estimate, plan: Plan) -> dict[str, Any]:
    assert plan.estimate is not None
    stated = estimate_to_dict(est)
    body = estimate_to_dict(plan.estimate)
    body["plan"] = planner_layout(plan, est)
    body["fits"] = plan.fits
    body["headroom_bytes"] = (plan.capacity_bytes - plan.estimate.total_bytes
                              if plan.capacity_bytes else body["headroom_bytes"])
    body["summary"] = body["verdict"] = plan.verdict
    body["assumptions"] = list(plan.assumptions)
    if plan.compute is not None:
        body["compute"] = compute_to_dict(plan.compute)
    body["as_stated"] = {key: stated[key] for key in ("plan", "per_gpu_bytes", "fits", "summary")}
    return body


def planner_layout(plan: Plan, est: Estimate) -> dict[str, Any]:
    """The planner's layout with the contract's keys (dp, tp, pp, cp, zero_stage, recompute,
    micro_batch) also for serving plans, whose figures come from ``plan.serving``."""
    if plan.layout is not None:
        return dict(plan.layout.to_dict())
    serving = plan.serving
    layout: dict[str, Any] = dict(est.layout)
    layout.update({"gpus": serving.get("gpus"), "nodes": serving.get("nodes"), "dp": 1,
                   "tp": serving.get("tp"), "pp": serving.get("pp")})
    for key in ("context", "sequences", "max_concurrent_sequences"):
        if key in serving:
            layout[key] = serving[key]
    return layout
