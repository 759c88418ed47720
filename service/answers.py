"""Computing the answer to an estimate request: resolve once, estimate, plan, build the data.

Pure engine work (no I/O, no HTTP); ``estimates.py`` puts the registry, the caches and the
metrics around it. Which layout the top-level figures describe: see ``Answer``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from service.core.hardware.gpus import Gpu
from service.core.job.request import EstimateRequest
from service.core.job.resolve import resolve
from service.core.memory.job_memory import estimate
from service.core.planning.entry import make_plan
from service.core.planning.serving_plan import serving_budget
from service.core.report.answer_types import Answer
from service.core.report.build_answer import build_answer


@dataclass(frozen=True, slots=True)
class Computed:
    answer: Answer
    estimate_s: float  # time resolving and estimating
    planner_s: float  # time in the planner (0 when it did not run)


def compute_answer(request: EstimateRequest, fits_on: bool = False,
                   fleet: tuple[Gpu, ...] | None = None) -> Computed:
    """The answer to a request (without ``link``, which needs the URL). The planner runs when
    a GPU type is named, or for the fits-on table across the catalog; ``fleet``: the GPU types
    a fix may move to (the default fleet when None)."""
    start = time.perf_counter()
    resolved = resolve(request)
    infer = resolved.job.task == "infer"
    est = estimate(resolved.job, serving_budget(resolved) if infer else None)
    middle = time.perf_counter()
    runs_planner = resolved.job.gpu is not None or fits_on
    plan = make_plan(resolved, with_fits_on=fits_on, fleet=fleet) if runs_planner else None
    end = time.perf_counter()
    return Computed(build_answer(resolved, est, plan), middle - start,
                    end - middle if runs_planner else 0.0)
