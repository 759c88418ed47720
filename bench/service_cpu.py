"""The service under uvicorn, measured by the server's own CPU time (``proc_stats.py``).

One uvicorn process (like one replica, with its worker pool) serves the real app. On it, in
one run:

- CPU per request of ``GET /healthz`` and of new requests of each kind (never the same request
  twice, so no cache answers): an estimate without a GPU (the engine), an estimate naming a GPU
  type (the planner), a chat question (the parser and the engine), a report page for a 405B
  job (the planner and the fits-on table across the catalog, rendered as HTML); each kind's
  ratio to ``/healthz`` is the median over rounds, with ``/healthz`` measured in every round;
- ``/healthz`` latency (p50, p99) while a client keeps opening new 405B report pages;
- resident memory growth over 300 chat questions of 4,000 random characters.

Run: ``python3 bench/service_cpu.py`` (``--quick`` for fewer requests; ``--embedded`` for the
in-process store instead of the Redis on 127.0.0.1:6379).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import random
import statistics
import string
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.proc_stats import cpu_seconds, rss_bytes  # noqa: E402
from bench.service_throughput import (  # noqa: E402
    TRIVIAL_PATH,
    LoadResult,
    Request,
    Source,
    _delete_prefix,
    redis_default,
    run_load,
    run_load_async,
    uvicorn_process,
)

HTML = {"Accept": "text/html"}
_unique = itertools.count()  # every new request of the run is different from all the others
PLANNER_JOBS = (  # the common planner questions, each asked with a new sequence length
    {"model": "llama-3-8b", "zero_stage": 3, "gpu": "a100-40gb"},
    {"model": "llama-3.1-70b", "global_batch": 512, "gpu": "h100-80gb"},
    {"model": "mistral-7b-v0.3", "task": "finetune", "lora_rank": 16, "gpu": "rtx4090-24gb"},
    {"model": "qwen2.5-72b", "task": "infer", "concurrent": 16, "gpu": "h100-80gb"},
)


def healthz(i: int) -> Request:
    return ("GET", "/healthz", None)


def trivial_post(i: int) -> Request:
    """The same body as a new estimate, to a route that parses it and answers a constant."""
    n = next(_unique)
    return ("POST", TRIVIAL_PATH, {"model": "llama-3-8b", "seq_len": 1024 + n,
                                   "micro_batch": 1 + n % 4, "zero_stage": 3})


def estimate_new(i: int) -> Request:
    n = next(_unique)
    return ("POST", "/v1/estimate", {"model": "llama-3-8b", "seq_len": 1024 + n,
                                     "micro_batch": 1 + n % 4, "zero_stage": 3})


def planner_new(i: int) -> Request:
    n = next(_unique)
    return ("POST", "/v1/estimate", {**PLANNER_JOBS[n % len(PLANNER_JOBS)], "seq_len": 1024 + n})


def ask_new(i: int) -> Request:
    n = next(_unique)
    text = f"llama 3 8b, seq {1024 + n}, zero 3, micro batch {1 + n % 4}"
    return ("POST", "/v1/ask", {"text": text, "previous": None})


def report_page(i: int) -> Request:
    n = next(_unique)
    query = f"model=llama-3.1-405b&seq_len=8192&global_batch={2048 + 64 * n}&gpu=h100-80gb"
    return ("GET", "/v1/estimate?" + query, None, HTML)


def random_question(rng: random.Random, chars: int = 4000) -> str:
    words: list[str] = []
    size = 0
    while size < chars:
        word = "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 10)))
        words.append(word)
        size += len(word) + 1
    return " ".join(words)[:chars]


@dataclass(frozen=True, slots=True)
class CpuRow:
    name: str
    requests: int
    cpu_us: float  # server CPU per request (with its worker pool), median over rounds
    own_us: float  # the same without the workers: the uvicorn process alone
    ratio: float  # cpu_us to /healthz's
    goal: float | None  # the ratio to stay at or under
    statuses: str


KINDS: tuple[tuple[str, Source, int, int, float | None], ...] = (
    # name, source, requests per round, concurrency, goal (ratio to /healthz)
    ("POST, same body, constant answer (framework floor)", trivial_post, 1500, 4, None),
    ("POST /v1/estimate, new, no GPU (engine)", estimate_new, 1500, 4, 1.25),
    ("POST /v1/estimate, new, GPU named (planner)", planner_new, 400, 4, 5.0),
    ("POST /v1/ask, new question", ask_new, 600, 4, 2.0),
    ("GET 405B report page, new (fits-on)", report_page, 20, 2, None),
)


def cpu_per_request(pid: int, port: int, source: Source, n: int,
                    concurrency: int) -> tuple[float, float, LoadResult]:
    """(server CPU per request with its workers, without them, the load's result) in µs."""
    before, own_before = cpu_seconds(pid), cpu_seconds(pid, children=False)
    result = run_load(port, source, n, concurrency, max_seconds=120)
    spent, own = cpu_seconds(pid) - before, cpu_seconds(pid, children=False) - own_before
    done = max(1, result.completed)
    return spent / done * 1e6, own / done * 1e6, result


def cpu_rows(pid: int, port: int, rounds: int, scale: float) -> list[CpuRow]:
    """Each round: /healthz, then every kind; medians over rounds."""
    health: list[float] = []
    per_kind: dict[str, list[tuple[float, float]]] = {name: [] for name, *_ in KINDS}
    seen: dict[str, LoadResult] = {}
    for _ in range(rounds):
        us, _own, result = cpu_per_request(pid, port, healthz, max(200, int(4000 * scale)), 4)
        health.append(us)
        seen["healthz"] = result
        for name, source, n, concurrency, _goal in KINDS:
            us, own, result = cpu_per_request(pid, port, source, max(4, int(n * scale)),
                                              concurrency)
            per_kind[name].append((us, own))
            seen[name] = result
    floor = statistics.median(health)
    rows = [CpuRow("GET /healthz (the floor)", seen["healthz"].completed, floor, floor, 1.0,
                   None, _statuses(seen["healthz"]))]
    for name, _source, _n, _c, goal in KINDS:
        us = statistics.median(t for t, _ in per_kind[name])
        own = statistics.median(o for _, o in per_kind[name])
        rows.append(CpuRow(name, seen[name].completed, us, own, us / floor, goal,
                           _statuses(seen[name])))
    return rows


def _statuses(result: LoadResult) -> str:
    return " ".join(f"{status}:{count}" for status, count in sorted(result.statuses.items())) \
        + (f" transport errors:{result.transport_errors}" if result.transport_errors else "")


@dataclass(frozen=True, slots=True)
class Probe:
    pages: int
    probes: int
    p50_ms: float
    p99_ms: float
    page_statuses: str


async def _probe(port: int, seconds: float) -> Probe:
    """``/healthz`` once every 10 ms while two clients open new report pages."""
    stop = time.monotonic() + seconds
    pages = asyncio.create_task(run_load_async(port, report_page, 10_000, 2,
                                               max_seconds=seconds))
    latencies: list[float] = []
    await asyncio.sleep(0.2)  # the pages are under way
    while time.monotonic() < stop and not pages.done():
        one = await run_load_async(port, healthz, 1, 1, timeout_s=30)
        latencies += one.latencies_s
        await asyncio.sleep(0.01)
    page_result = await pages
    ordered = sorted(latencies) or [float("nan")]

    def pct(q: float) -> float:
        return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] * 1e3

    return Probe(page_result.completed, len(latencies), pct(0.5), pct(0.99),
                 _statuses(page_result))


def healthz_under_pages(port: int, seconds: float) -> Probe:
    return asyncio.run(_probe(port, seconds))


def memory_growth(pid: int, port: int, questions: int, seed: int = 18) -> tuple[int, int]:
    """(RSS growth over ``questions`` random 4,000-character questions, RSS after warm-up)."""
    rng = random.Random(seed)

    def long_question(i: int) -> Request:
        return ("POST", "/v1/ask", {"text": random_question(rng), "previous": None})

    run_load(port, long_question, 30, 2, max_seconds=120)
    before = rss_bytes(pid)
    run_load(port, long_question, questions, 2, max_seconds=600)
    return rss_bytes(pid) - before, before


@dataclass(frozen=True, slots=True)
class Report:
    store: str
    rows: list[CpuRow]
    probe: Probe
    growth_bytes: int
    rss_bytes: int


def bench(quick: bool = False, redis_url: str | None = None,
          settings: dict[str, str] | None = None) -> Report:
    """``settings``: more FITCHECK_* variables for the server (FITCHECK_WORKERS, ...)."""
    prefix = f"fitcheck-bench-{uuid.uuid4().hex[:8]}:"
    env = {"FITCHECK_REDIS_URL": redis_url, "FITCHECK_REDIS_PREFIX": prefix} if redis_url \
        else {"FITCHECK_REDIS_URL": ""}
    env.update(settings or {})
    with uvicorn_process(env) as (port, pid):
        run_load(port, healthz, 200, 2)
        run_load(port, planner_new, 8, 2)  # the pool's workers are up and warm
        rows = cpu_rows(pid, port, 1 if quick else 3, 0.25 if quick else 1.0)
        probe = healthz_under_pages(port, 6 if quick else 15)
        growth, rss = memory_growth(pid, port, 300)
    if redis_url:
        _delete_prefix(redis_url, prefix)
    return Report("redis" if redis_url else "embedded", rows, probe, growth, rss)


def format_report(report: Report) -> str:
    lines = [f"{'server CPU per request (uvicorn + pool, ' + report.store + ')':<52}"
             f"{'requests':>9}{'CPU us':>9}{'x healthz':>10}{'goal':>7}{'uvicorn us':>11}"
             "  statuses"]
    for r in report.rows:
        goal = f"<={r.goal:g}" if r.goal is not None else ""
        flag = "  <- misses its goal" if r.goal is not None and r.ratio > r.goal else ""
        lines.append(f"{r.name:<52}{r.requests:>9}{r.cpu_us:>9.0f}{r.ratio:>10.2f}{goal:>7}"
                     f"{r.own_us:>11.0f}  {r.statuses}{flag}")
    p = report.probe
    lines.append(f"/healthz while report pages render: {p.probes} probes, p50 {p.p50_ms:.1f} ms, "
                 f"p99 {p.p99_ms:.1f} ms (goal <= 50 ms); {p.pages} pages [{p.page_statuses}]")
    lines.append(f"memory: +{report.growth_bytes / 2**20:.1f} MiB RSS over 300 random "
                 f"4,000-character questions (goal <= 8 MiB; {report.rss_bytes / 2**20:.0f} MiB "
                 "before)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer requests")
    parser.add_argument("--embedded", action="store_true", help="the in-process store")
    parser.add_argument("--workers", help="FITCHECK_WORKERS for the server (0: no pool)")
    parser.add_argument("--worker-kind", choices=("process", "thread"))
    args = parser.parse_args(argv)
    settings = {k: v for k, v in (("FITCHECK_WORKERS", args.workers),
                                  ("FITCHECK_WORKER_KIND", args.worker_kind)) if v is not None}
    print(format_report(bench(args.quick, None if args.embedded else redis_default(), settings)))


if __name__ == "__main__":
    main()
