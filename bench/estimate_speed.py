"""Time one core estimate (training and serving); prints microseconds per call and ratios.

Run: python3 bench/estimate_speed.py. Goal: a training estimate well under 100 us, since the
planner calls the engine thousands of times per question.
"""

from __future__ import annotations

import timeit

from service.core.job.request import EstimateRequest
from service.core.job.resolve import resolve
from service.core.memory.job_memory import estimate

CASES = {
    "train llama-3-8b zero-3 x8": EstimateRequest(model="llama-3-8b", seq_len=4096, zero_stage=3,
                                                  gpu="a100-40gb", gpu_count=8),
    "train llama-3.1-70b tp8 pp4": EstimateRequest(model="llama-3.1-70b", seq_len=8192, tp=8, pp=4,
                                                   gpu_count=64, global_batch=256,
                                                   recompute="full", gpu="h100-80gb"),
    "serve qwen2.5-72b tp4": EstimateRequest(model="qwen2.5-72b", task="infer", seq_len=32768,
                                             batch=16, gpu="h100-80gb", gpu_count=4),
}


def per_call_us(fn: object, number: int) -> float:
    timer = timeit.Timer(fn)  # type: ignore[arg-type]
    best = min(timer.repeat(repeat=5, number=number))
    return best / number * 1e6


def main() -> None:
    print(f"{'case':<34}{'full request us':>16}{'engine only us':>16}{'resolve share':>15}")
    for name, request in CASES.items():
        estimate(resolve(request).job)  # warm caches (presets, catalog)
        full = per_call_us(lambda r=request: estimate(resolve(r).job), 2000)
        job = resolve(request).job
        engine = per_call_us(lambda j=job: estimate(j), 2000)
        share = (full - engine) / full
        print(f"{name:<34}{full:>16.1f}{engine:>16.1f}{share:>15.0%}")


if __name__ == "__main__":
    main()
