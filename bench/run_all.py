"""fitcheck's benchmarks in one table, measured in one run: the core estimate beside
llm-analysis, the planner, the parser and the service, each as a figure, its goal and a ratio.

Every figure is CPU time, not wall time, so a busy machine does not move it much: the core,
the planner and the parser by this process's CPU clock (medians of rounds), the service by the
server's CPU per request read from /proc (the uvicorn process and its worker pool), as a ratio
to ``GET /healthz`` on the same server (``service_cpu.py``). Run: ``python3 bench/run_all.py``
(about two minutes; ``--quick`` for a rough pass). llm-analysis runs in its own virtualenv
(``python3 bench/peers.py --setup``, under $FITCHECK_PEERS_DIR).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import estimate_speed, planner_speed, service_cpu  # noqa: E402
from bench.service_throughput import redis_default  # noqa: E402

CORPUS = ROOT / "tests" / "data" / "parser_corpus.jsonl"


@dataclass(frozen=True, slots=True)
class Row:
    what: str
    figure: float
    unit: str
    goal: str
    ratio: float | None  # what the goal reads (figure / goal, x llm-analysis, x /healthz)
    ok: bool | None  # None: a figure without a goal


def core_rows(number: int) -> list[Row]:
    version, timings = estimate_speed.measure(number)
    rows = []
    for t in timings:
        rows.append(Row(f"core estimate: {t.case}, same job", t.same_us, "us",
                        f"<= {estimate_speed.GOAL_US:g} us", t.same_us / estimate_speed.GOAL_US,
                        t.same_us <= estimate_speed.GOAL_US))
        rows.append(Row(f"core estimate: {t.case}, new job", t.new_us, "us", "", None, None))
        if t.peer_us is not None:
            ratio = t.peer_us / t.same_us
            rows.append(Row(f"  llm-analysis {version}, same job (ratio: x fitcheck)", t.peer_us,
                            "us", f">= {estimate_speed.GOAL_PEER_RATIO:g}x", ratio,
                            ratio >= estimate_speed.GOAL_PEER_RATIO))
        else:
            rows.append(Row(f"  llm-analysis: {version}", float("nan"), "", "", None, None))
    return rows


def planner_rows(repeat: int) -> list[Row]:
    """Each case twice: the first question about its model (no table kept), and a new question
    (another sequence length) about a model asked before (its model-state tables kept)."""
    rows = []
    for case in planner_speed.CASES:
        goal = case.goal_ms
        for first in (True, False):
            ms = planner_speed.case_ms(case, repeat, first=first)
            what = f"planner: {case.name}, {'first' if first else 'new'}"
            rows.append(Row(what, ms, "ms", f"<= {goal:g} ms" if goal else "",
                            ms / goal if goal else None, ms <= goal if goal else None))
    return rows


def parser_rows(passes: int) -> list[Row]:
    """``parse`` over every question of the corpus; per question, the median of ``passes``."""
    from service.parser import parse

    texts = [json.loads(line)["text"] for line in CORPUS.read_text().splitlines() if line]
    times: list[list[float]] = [[] for _ in texts]
    for _ in range(passes):
        for i, text in enumerate(texts):
            start = time.process_time()
            parse(text)
            times[i].append((time.process_time() - start) * 1e6)
    per = sorted(statistics.median(t) for t in times)
    return [Row(f"parser: per question of the corpus ({len(texts)}), median", per[len(per) // 2],
                "us", "", None, None),
            Row("parser: per question, p99", per[round(0.99 * (len(per) - 1))], "us", "", None,
                None)]


def service_rows(quick: bool) -> tuple[str, list[Row]]:
    report = service_cpu.bench(quick, redis_default())
    rows = []
    for r in report.rows:
        rows.append(Row(f"service: {r.name}", r.cpu_us, "us CPU", f"<= {r.goal:g}x /healthz"
                        if r.goal is not None else "", r.ratio, r.ratio <= r.goal
                        if r.goal is not None else None))
    p = report.probe
    rows.append(Row(f"service: /healthz p99 while 405B report pages render ({p.probes} probes)",
                    p.p99_ms, "ms", "<= 50 ms", p.p99_ms / 50, p.p99_ms <= 50))
    growth = report.growth_bytes / 2**20
    rows.append(Row("service: RSS growth over 300 random 4,000-character questions", growth,
                    "MiB", "<= 8 MiB", growth / 8, growth <= 8))
    return f"uvicorn 1 process + its worker pool, {report.store}", rows


def table(rows: list[Row]) -> str:
    out = [f"{'benchmark':<66}{'figure':>10} {'unit':<7}{'goal':<18}{'ratio':>7}"]
    out.append("-" * len(out[0]))
    for r in rows:
        ratio = "" if r.ratio is None else f"{r.ratio:.2f}"
        flag = "  <- misses its goal" if r.ok is False else ""
        figure = "" if r.figure != r.figure else f"{r.figure:.1f}"
        out.append(f"{r.what:<66}{figure:>10} {r.unit:<7}{r.goal:<18}{ratio:>7}{flag}".rstrip())
    return "\n".join(out)


def run(quick: bool) -> str:
    rows = core_rows(300 if quick else 2000)
    rows += planner_rows(5 if quick else 15)
    rows += parser_rows(2 if quick else 5)
    label, service = service_rows(quick)
    rows += service
    header = (f"fitcheck benchmarks (Python {platform.python_version()}, {platform.machine()}, "
              f"CPU time; service: {label})")
    return header + "\n" + table(rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args(argv)
    print(run(args.quick))


if __name__ == "__main__":
    main()
