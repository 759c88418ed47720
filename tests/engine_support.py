"""The engine's road for a request, as the tests use it: resolve once, then estimate or plan."""

from __future__ import annotations

from service.core.job.request import EstimateRequest
from service.core.job.resolve import resolve
from service.core.memory.breakdown import Estimate
from service.core.memory.job_memory import estimate
from service.core.planning.entry import make_plan
from service.core.planning.plan_types import Plan
from service.core.report.headline import plan_verdict
from service.render.assumption_text import assumption_line

# the planner's acceptance job: a 7B at 4k with ZeRO-3 on A100 40GB
DONE_MEANS = EstimateRequest(model="7B", seq_len=4096, zero_stage=3, gpu="a100-40gb")


def estimate_of(request: EstimateRequest) -> Estimate:
    return estimate(resolve(request).job)


def plan_of(request: EstimateRequest, fits_on: bool = False) -> Plan:
    return make_plan(resolve(request), with_fits_on=fits_on)


def verdict_of(plan: Plan) -> str:
    return plan_verdict(plan)


def assumption_lines(request: EstimateRequest) -> list[str]:
    """The request's assumptions in words, as the command line prints them."""
    return [assumption_line(a) for a in resolve(request).assumptions]


def plan_assumption_lines(plan: Plan) -> list[str]:
    return [assumption_line(a) for a in plan.assumptions]
