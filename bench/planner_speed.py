"""Time the planner (process CPU time, median of rounds) on common questions, the given-count
answer with its fixes, and the fits-on table; prints milliseconds against each goal.

Each call resolves the request and searches from scratch, as a new API request would, in two
ways: "first" forgets every table (``clear_tables``), a question about a model and setup no one
asked about before; "new" asks each round with another sequence length and keeps only the
model-state tables of the questions before (``clear_tables(states=False)``), a new question
about a model asked about before. Run: python3 bench/planner_speed.py
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from service.core.job.request import EstimateRequest
from service.core.job.resolve import resolve
from service.core.planning.entry import make_plan
from service.core.planning.layout_totals import clear_tables
from service.core.report.headline import plan_verdict

COMMON_MS = 1.5  # a common question: the fewest GPUs, or the layout on a stated count
FITS_ON_405B_MS = 30.0
LLAMA_70B = {"model": "llama-3.1-70b", "seq_len": 8192, "global_batch": 512}


@dataclass(frozen=True, slots=True)
class Case:
    name: str
    request: EstimateRequest
    fits_on: bool = False
    goal_ms: float | None = None  # None: a figure without a goal of its own


CASES = (
    Case("8b zero-3 fewest on a100-40gb",
         EstimateRequest(model="llama-3-8b", seq_len=4096, zero_stage=3, gpu="a100-40gb"),
         goal_ms=COMMON_MS),
    Case("8b zero-3 on 8 a100-40gb", EstimateRequest(
        model="llama-3-8b", seq_len=4096, zero_stage=3, gpu="a100-40gb", gpu_count=8),
         goal_ms=COMMON_MS),
    Case("lora qwen2.5-14b on one rtx4090", EstimateRequest(
        model="qwen2.5-14b", task="finetune", lora_rank=16, gpu="rtx4090-24gb", gpu_count=1),
         goal_ms=COMMON_MS),
    Case("serve 70b 16k x 50 fewest h100", EstimateRequest(
        model="llama-3.1-70b", task="infer", seq_len=16384, concurrent=50, gpu="h100-80gb"),
         goal_ms=COMMON_MS),
    Case("70b fewest on h100-80gb", EstimateRequest(**LLAMA_70B, gpu="h100-80gb"),  # type: ignore[arg-type]
         goal_ms=COMMON_MS),
    Case("70b fewest on a100-40gb", EstimateRequest(**LLAMA_70B, gpu="a100-40gb"),  # type: ignore[arg-type]
         goal_ms=COMMON_MS),
    Case("70b on 8 h100 (short: fixes)", EstimateRequest(**LLAMA_70B, gpu="h100-80gb",  # type: ignore[arg-type]
                                                         gpu_count=8)),
    Case("405b fewest on h100-80gb", EstimateRequest(model="llama-3.1-405b", seq_len=8192,
                                                     global_batch=2048, gpu="h100-80gb")),
    Case("70b fits-on table", EstimateRequest(**LLAMA_70B, gpu="h100-80gb"), True),  # type: ignore[arg-type]
    Case("405b fits-on table", EstimateRequest(model="llama-3.1-405b", seq_len=8192,
                                               global_batch=2048, gpu="h100-80gb"), True,
         FITS_ON_405B_MS),
)


def timings_ms(fn: Callable[[int], object], repeat: int = 15, first: bool = True) -> list[float]:
    """CPU ms of ``fn(round)`` per round; ``first``: every table forgotten before each."""
    fn(0)  # warm the preset and catalog caches
    out = []
    for i in range(1, repeat + 1):
        clear_tables(states=first)
        start = time.process_time()
        fn(i)
        out.append((time.process_time() - start) * 1e3)
    return out


def case_ms(case: Case, repeat: int = 15, first: bool = True) -> float:
    """Median ms; ``first`` False: each round a new sequence length (128 tokens more per round,
    which keeps every context-parallel split of the original)."""
    seq = case.request.seq_len or 4096

    def ask(i: int) -> object:
        request = case.request if first else replace(case.request, seq_len=seq + 128 * i)
        return make_plan(resolve(request), with_fits_on=case.fits_on)

    return statistics.median(timings_ms(ask, repeat, first))


def main() -> None:
    print(f"{'case (process CPU, median ms)':<34}{'first':>8}{'new':>8}{'goal':>7}  answer")
    for case in CASES:
        first, new = case_ms(case), case_ms(case, first=False)
        goal = f"{case.goal_ms:g}" if case.goal_ms is not None else "-"
        verdict = plan_verdict(make_plan(resolve(case.request)))
        print(f"{case.name:<34}{first:>8.2f}{new:>8.2f}{goal:>7}  {verdict[:56]}")


if __name__ == "__main__":
    main()
