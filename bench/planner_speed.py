"""Time the planner's full search (process CPU time); prints milliseconds and the ratio to the
100 ms goal.

Run: python3 bench/planner_speed.py. Each call resolves the request and searches from scratch
(``clear_tables``: no totals kept from the call before), as a new API request would.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from service.core.job.request import EstimateRequest
from service.core.job.resolve import resolve
from service.core.planning.entry import make_plan
from service.core.planning.layout_totals import clear_tables
from service.core.report.headline import plan_verdict

GOAL_MS = 100.0
LLAMA_70B = dict(model="llama-3.1-70b", seq_len=8192, global_batch=512)
CASES: dict[str, tuple[EstimateRequest, bool]] = {
    "70b fewest on h100-80gb": (EstimateRequest(**LLAMA_70B, gpu="h100-80gb"), False),  # type: ignore[arg-type]
    "70b fewest on a100-40gb": (EstimateRequest(**LLAMA_70B, gpu="a100-40gb"), False),  # type: ignore[arg-type]
    "70b no global batch, h100": (EstimateRequest(model="llama-3.1-70b", seq_len=8192,
                                                  gpu="h100-80gb"), False),
    "70b on 8 h100 (short, fixes)": (EstimateRequest(**LLAMA_70B, gpu="h100-80gb",  # type: ignore[arg-type]
                                                     gpu_count=8), False),
    "70b fits-on table (25 GPUs)": (EstimateRequest(**LLAMA_70B, gpu="h100-80gb"), True),  # type: ignore[arg-type]
    "405b fewest on h100-80gb": (EstimateRequest(model="llama-3.1-405b", seq_len=8192,
                                                 global_batch=2048, gpu="h100-80gb"), False),
    "serve 70b 16k x 50, fits-on": (EstimateRequest(model="llama-3.1-70b", task="infer",
                                                    seq_len=16384, concurrent=50,
                                                    gpu="h100-80gb"), True),
}


def timings_ms(fn: Callable[[], object], repeat: int = 15) -> list[float]:
    fn()  # warm the preset and catalog caches
    out = []
    for _ in range(repeat):
        clear_tables()
        start = time.process_time()
        fn()
        out.append((time.process_time() - start) * 1e3)
    return out


def main() -> None:
    print(f"{'case':<32}{'best ms':>9}{'median ms':>11}{'/ 100 ms':>10}  answer")
    for name, (request, table) in CASES.items():
        times = timings_ms(lambda r=request, t=table: make_plan(resolve(r), with_fits_on=t))
        plan = make_plan(resolve(request))
        best, median = min(times), statistics.median(times)
        print(f"{name:<32}{best:>9.1f}{median:>11.1f}{median / GOAL_MS:>10.2f}  "
              f"{plan_verdict(plan)[:70]}")


if __name__ == "__main__":
    main()
