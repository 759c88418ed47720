"""fitcheck against peak GPU memory measured on real jobs (``tests/data/gpu_runs/*.jsonl``).

What a job needs on the GPU = ``peak_reserved + non_torch_bytes`` (the allocator's peak plus
memory outside PyTorch). For every run: the engine's per-GPU total for the same job, the error,
and the fit verdict (does it fit the card's memory) against whether the run ran out of memory.
The table groups runs by kind (full training by precision, LoRA, QLoRA, Hugging Face serving):
n, median |error|, share within 10%, verdicts right, and the error band's coverage and width.

``--fit`` chooses the two fitted constants of the allocator's reserve, ``stranded_transient_share``
(cached copies of the largest transient block) and ``fragmentation_share`` (cached share of the
allocated peak), on half A of the training runs (a hash split of the run id) and scores half B
with them, and the other way round, then fits them on all runs for
``service/data/calibration.json``. ``--bands`` prints each kind's error band: the shortest
interval of errors holding ceil(0.9 (n + 1)) of its runs' errors.

Run: python3 bench/gpu_accuracy.py [--runs FILE] [--fit] [--per-run]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from service.core.job.request import EstimateRequest  # noqa: E402
from service.core.job.resolve import resolve  # noqa: E402
from service.core.memory.breakdown import Estimate  # noqa: E402
from service.core.memory.error_band import band_for  # noqa: E402
from service.core.memory.formula import evaluate  # noqa: E402
from service.core.memory.job_memory import estimate  # noqa: E402

RUNS = ROOT / "tests" / "data" / "gpu_runs" / "h100-80gb.jsonl"
# the scenario's optimizer implementation, which the dataset's own fitcheck_request cannot say
OPTIMIZERS = {"adamw_fused": "adamw_torch_fused", "adamw_foreach": "adamw_torch",
              "adamw_8bit": "adamw_8bit"}


@dataclass(frozen=True, slots=True)
class Run:
    key: str
    kind: str
    request: EstimateRequest
    measured: int | None  # None: the job ran out of memory
    oom: bool
    allocated: int | None


def kind_of(scenario: dict[str, Any]) -> str:
    if scenario["kind"] == "infer":
        return "HF serving"
    method = scenario.get("method", "full")
    if method == "full":
        return f"full training, {scenario['precision']}"
    return "LoRA" if method == "lora" else "QLoRA"


def request_of(record: dict[str, Any]) -> EstimateRequest:
    fields = dict(record["fitcheck_request"])
    optim = record["scenario"].get("optim")
    if optim in OPTIMIZERS:
        fields["optimizer"] = OPTIMIZERS[optim]
    return EstimateRequest(**fields)


def load(path: Path = RUNS) -> tuple[dict[str, Any], list[Run]]:
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    header = lines[0]["header"]
    runs: list[Run] = []
    seen: set[str] = set()
    for record in lines[1:]:
        key = record["id"] + ("+expandable" if record.get("alloc_conf") else "")
        if key in seen:
            continue
        seen.add(key)
        measured = None if record["oom"] else record["peak_reserved"] + record["non_torch_bytes"]
        runs.append(Run(key, kind_of(record["scenario"]), request_of(record), measured,
                        bool(record["oom"]), record.get("peak_allocated")))
    return header, runs


def half(key: str) -> int:
    return hashlib.sha256(key.encode()).digest()[0] % 2


def engine_estimate(run: Run) -> Estimate:
    return estimate(resolve(run.request).job)


def with_constants(est: Estimate, stranded: float, share: float) -> int:
    """The total with other reserve constants (the overhead's formula, re-evaluated)."""
    total = 0
    for c in est.components:
        terms = c.term_map
        if "fragmentation" in terms:
            total += round(evaluate(c.expression, {**terms, "stranded": stranded,
                                                   "fragmentation": share}))
        else:
            total += c.bytes
    return total


@dataclass(frozen=True, slots=True)
class Scored:
    run: Run
    estimate: int
    error: float | None  # (estimate - measured) / measured
    verdict_right: bool
    in_band: bool | None
    band_width: float


def score(runs: list[Run], capacity: int, total: Callable[[Run], tuple[int, Estimate]]
          ) -> list[Scored]:
    out = []
    for run in runs:
        value, est = total(run)
        band = band_for(est.job, value)
        error = None if run.measured is None else (value - run.measured) / run.measured
        in_band = None if run.measured is None else band.low_bytes <= run.measured <= band.high_bytes
        out.append(Scored(run, value, error, (value > capacity) == run.oom, in_band,
                          (band.high_bytes - band.low_bytes) / value))
    return out


def summary(rows: list[Scored]) -> str:
    errors = [abs(r.error) for r in rows if r.error is not None]
    signed = [r.error for r in rows if r.error is not None]
    within = sum(1 for e in errors if e <= 0.10)
    band = [r.in_band for r in rows if r.in_band is not None]
    width = statistics.median(r.band_width for r in rows)
    return (f"{len(rows):>4} {statistics.median(errors):>8.1%} {within / len(errors):>8.0%} "
            f"{statistics.median(signed):>+8.1%} {sum(r.verdict_right for r in rows):>4}/"
            f"{len(rows):<4} {sum(band):>4}/{len(band):<4} {width:>7.0%}")


def table(rows: list[Scored], title: str) -> str:
    kinds = sorted({r.run.kind for r in rows})
    lines = [title, f"{'kind':<28}{'n':>4} {'median':>8} {'<=10%':>8} {'bias':>8} "
             f"{'verdicts':>9} {'in band':>9} {'width':>7}"]
    for kind in kinds:
        lines.append(f"{kind:<28}" + summary([r for r in rows if r.run.kind == kind]))
    training = [r for r in rows if r.run.kind != "HF serving"]
    lines.append(f"{'training and fine-tuning':<28}" + summary(training))
    lines.append(f"{'all':<28}" + summary(rows))
    return "\n".join(lines)


def fit_constants(runs: list[Run]) -> tuple[float, float]:
    """(stranded, share) minimising median |error| - 2% x the share within 10% over the
    training runs, on a grid (0.1 and 0.5%)."""
    ests = [(r, engine_estimate(r)) for r in runs if r.measured is not None
            and r.kind != "HF serving"]

    def objective(k: float, c: float) -> float:
        errors = [abs(with_constants(e, k, c) - (r.measured or 1)) / (r.measured or 1)
                  for r, e in ests]
        within = sum(1 for x in errors if x <= 0.10) / len(errors)
        return statistics.median(errors) - 0.02 * within

    grid = [(k / 10, c / 200) for k in range(5, 31) for c in range(0, 31)]
    return min(grid, key=lambda kc: objective(*kc))


def band_of(rows: list[Scored]) -> tuple[float, float]:
    """The shortest [low, high] of measured / estimate - 1 holding ceil(0.9 (n + 1)) of the n
    runs (a split-conformal band: a new run of the kind falls inside about 9 times in 10)."""
    ratios = sorted((r.run.measured or 0) / r.estimate - 1 for r in rows if r.run.measured)
    n = len(ratios)
    need = min(n, -(-9 * (n + 1) // 10))
    return min(((ratios[i], ratios[i + need - 1]) for i in range(n - need + 1)),
               key=lambda lh: lh[1] - lh[0])


def coverage(rows: list[Scored], band: tuple[float, float]) -> str:
    inside = [band[0] <= (r.run.measured or 0) / r.estimate - 1 <= band[1]
              for r in rows if r.run.measured]
    return f"{sum(inside)}/{len(inside)}"


def band_group(scored: Scored) -> str:
    """The band kinds of service/core/memory/error_band.py, by the run's job."""
    return band_for(engine_estimate(scored.run).job, scored.estimate).kind


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=Path, default=RUNS)
    parser.add_argument("--fit", action="store_true", help="fit the share on halves")
    parser.add_argument("--per-run", action="store_true", help="one line per run")
    parser.add_argument("--bands", action="store_true", help="each kind's error band")
    args = parser.parse_args()
    header, runs = load(args.runs)
    capacity = header["total_memory"]
    print(f"{len(runs)} runs on {header['gpu']} (torch {header['torch']}, transformers "
          f"{header['transformers']}); capacity {capacity / 1e9:.2f} GB; error = "
          "(estimate - measured) / measured")

    def as_is(run: Run) -> tuple[int, Estimate]:
        est = engine_estimate(run)
        return est.total_bytes, est

    rows = score(runs, capacity, as_is)
    print(table(rows, "\nThe engine as it is:"))
    if args.fit:
        for name, train, test in (("A", 0, 1), ("B", 1, 0)):
            k, c = fit_constants([r for r in runs if half(r.key) == train])
            held = [r for r in runs if half(r.key) == test]

            def refit(run: Run, k: float = k, c: float = c) -> tuple[int, Estimate]:
                est = engine_estimate(run)
                return with_constants(est, k, c), est

            print(table(score(held, capacity, refit), f"\nstranded {k:.1f}, share {c:.3f} "
                        f"fitted on half {name}, scored on the other half:"))
        k, c = fit_constants(runs)
        print(f"\nFitted on all runs: stranded {k:.1f}, share {c:.3f}")
    if args.bands:
        print("\nError bands (measured / estimate - 1, the shortest interval holding 90% of a "
              "kind's runs); 2-fold: the band of one half's runs, its coverage of the other:")
        for group in sorted({band_group(r) for r in rows}):
            mine = [r for r in rows if band_group(r) == group]
            low, high = band_of(mine)
            a = [r for r in mine if half(r.run.key) == 0]
            b = [r for r in mine if half(r.run.key) == 1]
            loo = sum(coverage([r], band_of([o for o in mine if o is not r])) == "1/1"
                      for r in mine if r.run.measured)
            print(f"  {group:<36} low {low:+.3f} high {high:+.3f} ({len(mine)} runs); 2-fold "
                  f"coverage {coverage(b, band_of(a))} and {coverage(a, band_of(b))}; "
                  f"leave-one-out {loo}/{sum(1 for r in mine if r.run.measured)}")
    if args.per_run:
        for r in rows:
            err = f"{r.error:+7.1%}" if r.error is not None else "    OOM"
            measured = f"{(r.run.measured or 0) / 1e9:7.2f}" if r.run.measured else "    OOM"
            est = engine_estimate(r.run)
            print(f"{r.run.key:<14}{r.run.kind:<26}{measured} {r.estimate / 1e9:7.2f} {err}  "
                  f"{est.peak_phase}")


if __name__ == "__main__":
    main()
