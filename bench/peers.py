"""fitcheck next to the open-source peer estimators, on the same jobs measured on a real GPU.

The runs (``shared/measurements/h100-80gb/runs.jsonl``: full training, LoRA, QLoRA and Hugging Face
serving on one H100 80GB) each carry their scenario and the fitcheck request for the same job. The
memory a job needs is ``peak_reserved + non_torch_bytes``. fitcheck answers through its CLI
(``fitcheck estimate --json`` with the request as flags, in-process; ``per_gpu_bytes.total``); each
peer answers in its own virtualenv through its adapter in ``bench/peers_adapters/`` (JSON on stdin and
stdout), so the peers' dependencies never mix with fitcheck's. A run a peer cannot express is n/a for
it (``--verbose`` says why).

Per job kind and tool: runs answered, median |error| and the share within 10% (over the answered runs
that finished: an OOM run has no full measurement), the median signed error, and fit verdicts right
(estimate <= the card's capacity, the same bound for every tool, against the run's measured OOM).

Run: ``python3 bench/peers.py --setup`` once (venvs under $FITCHECK_PEERS_DIR, else
/tmp/fitcheck-peers), then ``python3 bench/peers.py [--runs PATH] [--verbose] [--json OUT]``.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.peers_adapters import PEERS, Peer  # noqa: E402

RUNS = ROOT.parent / "shared" / "measurements" / "h100-80gb" / "runs.jsonl"
MODELS = ROOT / "service" / "data" / "models"
DECODE_TOKENS = 16  # every serving run decodes 16 tokens after a (ctx - 16)-token prompt
GROUPS = ("training full", "LoRA", "QLoRA", "HF serving")
FITCHECK = "fitcheck"


@dataclass(slots=True)
class Run:
    key: str  # the run's id; a repeat under expandable_segments gets "+expandable"
    record: dict[str, Any]
    group: str
    measured: int | None  # peak_reserved + non_torch_bytes; None for a run that hit OOM

    @property
    def oom(self) -> bool:
        return bool(self.record["oom"])


@dataclass(slots=True)
class Answer:
    total: float | None
    reason: str | None = None
    own_verdict: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)


def peers_dir() -> Path:
    return Path(os.environ.get("FITCHECK_PEERS_DIR", "/tmp/fitcheck-peers"))


def venv_python(base: Path, peer: Peer) -> Path:
    return base / "venvs" / peer.name / "bin" / "python"


# ---------------------------------------------------------------- setup


def installed_version(python: Path, dist: str) -> str | None:
    if not python.exists():
        return None
    code = f"import importlib.metadata as m; print(m.version({dist!r}))"
    proc = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=False)
    return proc.stdout.strip() if proc.returncode == 0 else None


def setup(base: Path, peers: list[Peer]) -> int:
    """Create one venv per peer and pip-install its pinned release; a venv already right is kept."""
    (base / "logs").mkdir(parents=True, exist_ok=True)
    failed = 0
    for peer in peers:
        python = venv_python(base, peer)
        if installed_version(python, peer.name) == peer.version:
            print(f"{peer.name} {peer.version}: already installed ({python.parent.parent})")
            continue
        venv, log = python.parent.parent, base / "logs" / f"{peer.name}-install.log"
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        with log.open("w") as out:
            proc = subprocess.run([str(python), "-m", "pip", "install", "--disable-pip-version-check",
                                   f"{peer.name}=={peer.version}"], stdout=out, stderr=subprocess.STDOUT,
                                  check=False)
        ok = proc.returncode == 0 and installed_version(python, peer.name) == peer.version
        failed += not ok
        print(f"{peer.name} {peer.version}: {'installed' if ok else 'FAILED'} ({venv}; log {log})")
    return 1 if failed else 0


# ---------------------------------------------------------------- runs and jobs


def load_runs(path: Path) -> tuple[dict[str, Any], list[Run]]:
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    header = lines[0].get("header", {}) if lines and "header" in lines[0] else {}
    runs, seen = [], set()
    for record in lines[1 if header else 0:]:
        key = record["id"]
        if key in seen:  # the same job again under another allocator setting
            expandable = "expandable_segments:True" in (record.get("alloc_conf") or "")
            key += "+expandable" if expandable else "+again"
        seen.add(key)
        scenario = record["scenario"]
        if scenario["kind"] == "infer":
            group = "HF serving"
        else:
            group = {"full": "training full", "lora": "LoRA", "qlora": "QLoRA"}[scenario["method"]]
        parts = record.get("peak_reserved"), record.get("non_torch_bytes")
        measured = None if record["oom"] or None in parts else int(parts[0]) + int(parts[1])
        runs.append(Run(key, record, group, measured))
    return header, runs


def load_models() -> dict[str, dict[str, Any]]:
    models: dict[str, dict[str, Any]] = {}
    for path in sorted(MODELS.glob("*.json")):
        for model in json.loads(path.read_text())["models"]:
            models[model["id"]] = model
    return models


def job_for(run: Run, models: dict[str, dict[str, Any]], gpu: dict[str, Any]) -> dict[str, Any]:
    """The run described peer-neutrally for the adapters (see bench/peers_adapters/_protocol.py)."""
    scenario = {k: v for k, v in run.record["scenario"].items() if k != "id"}
    model = models[scenario["model"]]
    return {"id": run.key, **scenario, "decode_tokens": DECODE_TOKENS, "gpu": gpu,
            "model": {"id": model["id"], "hf_repo": model["hf_repo"], "params": model["published_params"],
                      "arch": model["arch"]}}


# ---------------------------------------------------------------- the tools


def cli_args(request: dict[str, Any]) -> list[str]:
    """A fitcheck request as CLI flags: key -> --key-with-dashes, bool -> --flag / --no-flag."""
    args = ["estimate", "--json"]
    for key, value in request.items():
        name = key.replace("_", "-")
        if isinstance(value, bool):
            args.append(f"--{name}" if value else f"--no-{name}")
        elif value is not None:
            args += [f"--{name}", str(value)]
    return args


def fitcheck_answers(runs: list[Run]) -> dict[str, Answer]:
    """fitcheck's CLI, in-process, on every run's fitcheck request (n/a for all if it cannot load)."""
    try:
        from service.cli import main as cli
    except Exception as exc:  # the engine mid-change: the peers are still compared
        return {r.key: Answer(None, f"fitcheck failed to load: {type(exc).__name__}: {exc}") for r in runs}
    return {r.key: fitcheck_answer(cli, fitcheck_request(r.record)) for r in runs}


# the run's optimizer implementation, which the dataset's own fitcheck_request cannot say
# (fitcheck takes the Hugging Face optim names; the peers get the same scenario)
OPTIMIZER_NAMES = {"adamw_fused": "adamw_torch_fused", "adamw_foreach": "adamw_torch",
                   "adamw_8bit": "adamw_8bit"}


def fitcheck_request(record: dict[str, Any]) -> dict[str, Any]:
    request = dict(record["fitcheck_request"])
    optim = record["scenario"].get("optim")
    if optim in OPTIMIZER_NAMES:
        request["optimizer"] = OPTIMIZER_NAMES[optim]
    return request


def fitcheck_answer(fitcheck_cli: Callable[[list[str]], int], request: dict[str, Any]) -> Answer:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = fitcheck_cli(cli_args(request))
        except SystemExit as exc:  # argparse refusing a flag
            code = exc.code if isinstance(exc.code, int) else 2
    if code != 0:
        return Answer(None, err.getvalue().strip().splitlines()[-1] if err.getvalue().strip() else "failed")
    body = json.loads(out.getvalue())
    return Answer(float(body["per_gpu_bytes"]["total"]), None, "fits" if body.get("fits") else "does not fit",
                  {"per_gpu_bytes": body["per_gpu_bytes"]})


def fitcheck_version() -> str:
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    proc = subprocess.run(["git", "-C", str(ROOT), "describe", "--always", "--dirty"],
                          capture_output=True, text=True, check=False)
    return f"{version} ({proc.stdout.strip()})" if proc.returncode == 0 else version


def peer_answers(peer: Peer, jobs: list[dict[str, Any]], base: Path,
                 timeout: float) -> tuple[str, dict[str, Answer]]:
    """Run the peer's adapter in its venv on every job: (its version, answer per run key)."""
    python = venv_python(base, peer)

    def all_na(reason: str) -> dict[str, Answer]:
        return {job["id"]: Answer(None, reason) for job in jobs}

    if not python.exists():
        return "not installed", all_na(f"no venv at {python.parent.parent} (run bench/peers.py --setup)")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    with tempfile.TemporaryDirectory() as cwd:  # nothing of the working directory shadows the peer
        try:
            proc = subprocess.run([str(python), "-m", f"bench.peers_adapters.{peer.module}"],
                                  input=json.dumps({"jobs": jobs}), capture_output=True, text=True,
                                  cwd=cwd, env=env, timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            return "?", all_na(f"adapter timed out after {timeout:.0f} s")
    try:
        reply = json.loads(proc.stdout)
    except json.JSONDecodeError:
        tail = proc.stderr.strip().splitlines()[-1:] or ["no output"]
        return installed_version(python, peer.name) or "?", all_na(f"adapter failed: {tail[0]}")
    answers = {r["id"]: Answer(r.get("total_bytes"), r.get("reason"), r.get("own_verdict"),
                               r.get("detail") or {}) for r in reply["results"]}
    return str(reply["version"]), answers


# ---------------------------------------------------------------- scoring


def error(answer: Answer, run: Run) -> float | None:
    if answer.total is None or run.measured is None:
        return None
    return (answer.total - run.measured) / run.measured


def verdict_right(answer: Answer, run: Run, capacity: int) -> bool | None:
    return None if answer.total is None else (answer.total <= capacity) == (not run.oom)


@dataclass(slots=True)
class Row:
    group: str
    tool: str
    runs: int
    answered: int
    errors: list[float]  # signed, over the answered runs that finished
    right: int

    def stats(self) -> dict[str, Any]:
        absolute = [abs(e) for e in self.errors]
        return {"group": self.group, "tool": self.tool, "runs": self.runs, "answered": self.answered,
                "with_error": len(absolute),
                "median_abs_err": statistics.median(absolute) if absolute else None,
                "within_10pct": sum(a <= 0.10 for a in absolute) / len(absolute) if absolute else None,
                "median_err": statistics.median(self.errors) if self.errors else None,
                "fit_right": self.right}

    def cells(self) -> list[str]:
        if not self.answered:
            return [self.group, self.tool, f"0/{self.runs}", "n/a", "n/a", "n/a", "n/a"]
        s = self.stats()

        def pct(value: float | None, spec: str) -> str:
            return "-" if value is None else format(value, spec)

        return [self.group, self.tool, f"{self.answered}/{self.runs}", pct(s["median_abs_err"], ".1%"),
                pct(s["within_10pct"], ".0%"), pct(s["median_err"], "+.1%"), f"{self.right}/{self.answered}"]


def summary(runs: list[Run], answers: dict[str, dict[str, Answer]], capacity: int) -> list[Row]:
    rows = []
    for group in (*GROUPS, "all"):
        members = [r for r in runs if group in ("all", r.group)]
        for tool, by_run in answers.items():
            answered = [r for r in members if by_run[r.key].total is not None]
            errors = [e for r in answered if (e := error(by_run[r.key], r)) is not None]
            right = sum(bool(verdict_right(by_run[r.key], r, capacity)) for r in answered)
            rows.append(Row(group, tool, len(members), len(answered), errors, right))
    return rows


def print_table(rows: list[Row], title: list[str]) -> None:
    head = ["job kind", "tool", "answered", "median |err|", "within 10%", "median err", "fit right"]
    table = [head] + [row.cells() for row in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(head))]
    print("\n".join(title) + "\n")
    previous = None
    for index, line in enumerate(table):
        if index > 1 and line[0] != previous:
            print()
        previous = line[0]
        cells = [line[0].ljust(widths[0]), line[1].ljust(widths[1])]
        cells += [cell.rjust(width) for cell, width in zip(line[2:], widths[2:], strict=True)]
        print("  ".join(cells))


def print_runs(runs: list[Run], answers: dict[str, dict[str, Answer]]) -> None:
    tools, width = list(answers), max(len(run.key) for run in runs) + 2
    print("\nPer run (estimate GB, signed error; n/a with the reason below the row):")
    print(f"{'run':<{width}}{'kind':<15}{'model':<17}{'measured':>10}" + "".join(f"{t:>22}" for t in tools))
    for run in runs:
        measured = "OOM" if run.measured is None else f"{run.measured / 1e9:.1f}"
        cells = []
        for tool in tools:
            answer = answers[tool][run.key]
            err = error(answer, run)
            cells.append("n/a" if answer.total is None else
                         f"{answer.total / 1e9:.1f}" + ("" if err is None else f" ({err:+.0%})"))
        model = run.record["scenario"]["model"]
        row = f"{run.key:<{width}}{run.group:<15}{model:<17}{measured:>10}"
        print(row + "".join(f"{c:>22}" for c in cells))
        for tool in tools:
            reason = answers[tool][run.key].reason
            if reason:
                print(f"{'':<{width}}{tool} n/a: {reason}")


def per_run_json(runs: list[Run], answers: dict[str, dict[str, Answer]], capacity: int) -> list[Any]:
    out = []
    for run in runs:
        estimates = {}
        for tool, by_run in answers.items():
            answer = by_run[run.key]
            estimates[tool] = {"total_bytes": answer.total, "error": error(answer, run),
                               "verdict_right": verdict_right(answer, run, capacity), "reason": answer.reason,
                               "own_verdict": answer.own_verdict, "detail": answer.detail}
        out.append({"key": run.key, "id": run.record["id"], "group": run.group,
                    "scenario": run.record["scenario"], "fitcheck_request": run.record["fitcheck_request"],
                    "oom": run.oom, "measured_bytes": run.measured, "estimates": estimates})
    return out


# ---------------------------------------------------------------- main


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--setup", action="store_true", help="create the peers' venvs and install them")
    parser.add_argument("--runs", type=Path, default=RUNS, help=f"measured runs (default {RUNS})")
    parser.add_argument("--peers", default=",".join(p.name for p in PEERS),
                        help="comma-separated peers to run (default: all)")
    parser.add_argument("--json", type=Path, default=None, metavar="OUT", help="write the per-run figures")
    parser.add_argument("--verbose", action="store_true", help="list every run, with why a tool is n/a")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds for one peer's adapter")
    args = parser.parse_args()
    wanted = {name.strip() for name in args.peers.split(",") if name.strip()}
    unknown = wanted - {p.name for p in PEERS}
    if unknown:
        parser.error(f"unknown peer(s): {', '.join(sorted(unknown))}")
    peers = [p for p in PEERS if p.name in wanted]
    base = peers_dir()
    if args.setup:
        return setup(base, peers)

    header, runs = load_runs(args.runs)
    capacity = int(header.get("total_memory", 80 * 10**9))
    gpu = {"name": header.get("gpu", "h100-80gb"), "total_bytes": capacity}
    models = load_models()
    answers = {FITCHECK: fitcheck_answers(runs)}
    versions = {FITCHECK: fitcheck_version()}
    jobs = [job_for(r, models, gpu) for r in runs if r.record["scenario"]["model"] in models]
    for peer in peers:
        versions[peer.name], answers[peer.name] = peer_answers(peer, jobs, base, args.timeout)
        for run in runs:  # a model with no preset, or a run the adapter skipped, is n/a too
            answers[peer.name].setdefault(run.key, Answer(None, "no preset architecture or no answer"))

    date = datetime.date.today().isoformat()
    title = [f"GPU memory estimates vs {len(runs)} measured runs on {gpu['name']} ({args.runs.name}), {date}",
             "tools: " + ", ".join(f"{tool} {version}" for tool, version in versions.items()),
             f"measured = peak_reserved + non_torch_bytes; fit right: estimate <= {capacity / 1e9:.1f} GB "
             f"(the card's capacity, {capacity / 2**30:.2f} GiB) vs the run's OOM",
             "errors over the answered runs that finished (OOM runs count only for the verdict)"]
    rows = summary(runs, answers, capacity)
    print_table(rows, title)
    print("\npeer scope: " + "; ".join(f"{p.name}: {p.scope}" for p in peers))
    if args.verbose:
        print_runs(runs, answers)
    if args.json:
        data = {"date": date, "runs_file": str(args.runs), "gpu": gpu, "versions": versions,
                "summary": [row.stats() for row in rows],
                "runs": per_run_json(runs, answers, capacity)}
        args.json.write_text(json.dumps(data, indent=1))
        print(f"\nper-run figures: {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
