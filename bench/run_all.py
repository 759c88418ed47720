"""fitcheck's benchmarks in one table: the core, the planner, the parser and the service.

Run: ``python3 bench/run_all.py`` (about a minute; ``--quick`` for a rough pass in ~20 s).
Every row is a figure, its goal and the ratio figure / goal (below 1 is inside the goal; for
throughput, the ratio to the trivial endpoint, at least 0.8 on a cache hit); "(figure)" rows
have no goal of their own. Planner rows are medians of 15 searches. The service rows run uvicorn on
loopback with the Redis on 127.0.0.1:6379 when one answers (else the embedded store); see
``bench/service_throughput.py``. The single-purpose scripts beside this one print more detail:
``estimate_speed.py``, ``planner_speed.py``, ``parser_accuracy.py``, ``service_throughput.py``.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import service_throughput  # noqa: E402
from bench.estimate_speed import CASES as ESTIMATE_CASES  # noqa: E402
from bench.estimate_speed import per_call_us  # noqa: E402
from bench.planner_speed import CASES as PLANNER_CASES  # noqa: E402
from bench.planner_speed import timings_ms  # noqa: E402
from service.core.job.resolve import resolve  # noqa: E402
from service.core.memory.job_memory import estimate  # noqa: E402
from service.core.planning.entry import make_plan  # noqa: E402

CORPUS = ROOT / "tests" / "data" / "parser_corpus.jsonl"


@dataclass(frozen=True, slots=True)
class Row:
    what: str
    figure: float
    unit: str
    goal: str
    ratio: float  # figure / goal (or / trivial endpoint for throughput)
    ok: bool


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def core_rows(number: int) -> list[Row]:
    rows = []
    for name in ("train llama-3-8b zero-3 x8", "serve qwen2.5-72b tp4"):
        request = ESTIMATE_CASES[name]
        estimate(resolve(request).job)
        us = per_call_us(lambda r=request: estimate(resolve(r).job), number)
        rows.append(Row(f"core estimate: {name}", us, "us", "< 100 us", us / 100, us < 100))
    return rows


def planner_rows(repeat: int) -> list[Row]:
    rows = []
    for name in ("70b fewest on h100-80gb", "405b fewest on h100-80gb",
                 "70b on 8 h100 (short, fixes)", "70b fits-on table (25 GPUs)"):
        request, table = PLANNER_CASES[name]
        times = timings_ms(lambda r=request, t=table: make_plan(resolve(r), with_fits_on=t),  # type: ignore[misc]
                           repeat)
        ms = statistics.median(times)
        if table:  # one search per GPU type of the catalog: a figure, not one search
            rows.append(Row(f"planner: {name}", ms, "ms", "(figure)", float("nan"), True))
        else:
            rows.append(Row(f"planner: {name}", ms, "ms", "< 100 ms", ms / 100, ms < 100))
    return rows


def parser_rows(passes: int) -> list[Row]:
    """``parse`` over every question of the corpus; per question, the best of ``passes``."""
    from service.parser import parse

    texts = [json.loads(line)["text"] for line in CORPUS.read_text().splitlines() if line]
    best = [float("inf")] * len(texts)
    for _ in range(passes):
        for i, text in enumerate(texts):
            start = time.perf_counter()
            parse(text)
            best[i] = min(best[i], (time.perf_counter() - start) * 1e6)
    total_ms = sum(best) / 1e3
    mean, p99 = statistics.fmean(best), _pct(best, 0.99)
    core = ESTIMATE_CASES["train llama-3-8b zero-3 x8"]
    core_us = per_call_us(lambda: estimate(resolve(core).job), 300)
    return [
        Row(f"parser: the corpus ({len(texts)} questions), total", total_ms, "ms", "(figure)",
            float("nan"), True),
        Row("parser: per question, mean (ratio: x one core estimate)", mean, "us", "(figure)",
            mean / core_us, True),
        Row("parser: per question, p99", p99, "us", "(figure)", float("nan"), True),
    ]


def service_rows(n: int, concurrency: int, repeat: int) -> tuple[str, list[Row]]:
    redis_url = service_throughput.redis_default()
    store, measured = service_throughput.bench(n, concurrency, redis_url, repeat)
    rows = []
    for m in measured:
        floor = m.name.startswith("trivial")
        goal = "the floor" if floor else ">= 0.8x trivial" if "hit" in m.name else "(figure)"
        ok = floor or m.vs_trivial >= 0.8 or "hit" not in m.name
        rows.append(Row(f"service: {m.name}, req/s", m.rps, "req/s", goal, m.vs_trivial, ok))
        rows.append(Row(f"service: {m.name}, p50 / p99", m.p50_ms, f"/ {m.p99_ms:.2f} ms",
                        "", float("nan"), True))
    label = f"{store}, c={concurrency}, {n} requests a row"
    return label, rows


def table(rows: list[Row]) -> str:
    out = [f"{'benchmark':<58}{'figure':>12} {'unit':<13}{'goal':<17}{'ratio':>7}"]
    out.append("-" * len(out[0]))
    for r in rows:
        ratio = "" if r.ratio != r.ratio else f"{r.ratio:.2f}"
        flag = "" if r.ok else "  <- misses its goal"
        out.append(f"{r.what:<58}{r.figure:>12.1f} {r.unit:<13}{r.goal:<17}{ratio:>7}{flag}"
                   .rstrip())
    return "\n".join(out)


def run(quick: bool) -> str:
    sections: list[tuple[str, Callable[[], list[Row]]]] = [
        ("core", lambda: core_rows(300 if quick else 2000)),
        ("planner", lambda: planner_rows(5 if quick else 15)),
        ("parser", lambda: parser_rows(2 if quick else 5)),
    ]
    rows: list[Row] = []
    for _, fn in sections:
        rows.extend(fn())
    label, service = service_rows(800 if quick else 3000, 8, 1 if quick else 3)
    rows.extend(service)
    header = (f"fitcheck benchmarks (Python {platform.python_version()}, "
              f"{platform.machine()}, service: uvicorn 1 process, {label})")
    return header + "\n" + table(rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args(argv)
    print(run(args.quick))


if __name__ == "__main__":
    main()
