"""The core estimate's speed (process CPU time per call, median of rounds), side by side with
llm-analysis on the same jobs, timed in the same run in its own virtualenv
(``peers_adapters/peer_speed.py``; ``python3 bench/peers.py --setup`` installs it under
$FITCHECK_PEERS_DIR).

"core estimate" is what one request costs the engine: ``resolve`` and ``estimate``. "same job"
asks the same request again (the established measure; the per-model tables are warm), "new
job" changes the sequence length every call (what a new question costs).

Run: python3 bench/estimate_speed.py
"""

from __future__ import annotations

import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.peers import peers_dir, venv_python  # noqa: E402
from bench.peers_adapters import PEERS  # noqa: E402
from service.core.job.request import EstimateRequest  # noqa: E402
from service.core.job.resolve import resolve  # noqa: E402
from service.core.memory.job_memory import estimate  # noqa: E402
from service.core.model.presets import find_preset  # noqa: E402

GOAL_US = 20.0
GOAL_PEER_RATIO = 10.0
H100 = {"name": "NVIDIA H100 80GB SXM", "total_bytes": 85_520_809_984}


@dataclass(frozen=True, slots=True)
class Case:
    name: str
    request: EstimateRequest
    peer_job: dict[str, Any]  # the same job for the peers' adapters (_protocol.py)


def _model(model_id: str) -> dict[str, Any]:
    preset = find_preset(model_id)
    return {"id": preset.id, "hf_repo": preset.hf_repo, "params": preset.published_params,
            "arch": {**preset.arch.to_dict(), "family": preset.family}}


CASES = (
    Case("train llama-3-8b seq 4096, 1 GPU",
         EstimateRequest(model="llama-3-8b", seq_len=4096, micro_batch=1,
                         optimizer="adamw_torch_fused", gpu="h100-80gb", gpu_count=1),
         {"id": "train", "kind": "train", "method": "full", "seq": 4096, "mb": 1, "ckpt": False,
          "precision": "bf16_mixed", "optim": "adamw_fused", "attn": "sdpa", "rank": 16,
          "targets": "all_linear", "model": _model("llama-3-8b"), "gpu": H100}),
    Case("serve llama-3-8b 4096 x 16, 1 GPU",
         EstimateRequest(model="llama-3-8b", task="infer", seq_len=4096, batch=16,
                         gpu="h100-80gb", gpu_count=1),
         {"id": "serve", "kind": "infer", "batch": 16, "ctx": 4096, "decode_tokens": 16,
          "model": _model("llama-3-8b"), "gpu": H100}),
)


def per_call_us(fn: Callable[[], object], number: int, repeat: int = 5) -> float:
    """Process CPU time per call: the median of ``repeat`` rounds of ``number`` calls."""
    fn()
    rounds = []
    for _ in range(repeat):
        start = time.process_time()
        for _ in range(number):
            fn()
        rounds.append((time.process_time() - start) / number * 1e6)
    return statistics.median(rounds)


def fitcheck_us(request: EstimateRequest, new_job: bool, number: int) -> float:
    if not new_job:
        return per_call_us(lambda: estimate(resolve(request).job), number)
    seqs = itertools.cycle(range(1024, 1024 + 4 * number))
    return per_call_us(lambda: estimate(resolve(replace(request, seq_len=next(seqs))).job), number)


def peer_us(jobs: list[dict[str, Any]], number: int, peer: str = "llm-analysis"
            ) -> tuple[str, dict[str, float]]:
    """(the peer's version, µs per job id), or ("not installed", {})."""
    found = next(p for p in PEERS if p.name == peer)
    python = venv_python(peers_dir(), found)
    if not python.exists():
        return "not installed", {}
    request = {"module": found.module, "jobs": jobs, "number": number, "repeat": 5}
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    with tempfile.TemporaryDirectory() as cwd:
        proc = subprocess.run([str(python), "-m", "bench.peers_adapters.peer_speed"],
                              input=json.dumps(request), capture_output=True, text=True, cwd=cwd,
                              env=env, timeout=600, check=False)
    try:
        reply = json.loads(proc.stdout)
    except json.JSONDecodeError:
        return f"failed: {(proc.stderr.strip().splitlines() or ['no output'])[-1]}", {}
    return str(reply["version"]), {r["id"]: float(r["us"]) for r in reply["results"]}


@dataclass(frozen=True, slots=True)
class Timing:
    case: str
    same_us: float
    new_us: float
    peer_us: float | None


def measure(number: int = 2000) -> tuple[str, list[Timing]]:
    version, peers = peer_us([c.peer_job for c in CASES], max(50, number // 10))
    rows = [Timing(c.name, fitcheck_us(c.request, False, number),
                   fitcheck_us(c.request, True, number), peers.get(c.peer_job["id"]))
            for c in CASES]
    return version, rows


def main() -> None:
    version, rows = measure()
    print(f"{'core estimate (process CPU per call)':<36}{'same job us':>12}{'new job us':>12}"
          f"{'llm-analysis us':>17}{'x faster':>10}   goal: <= {GOAL_US:g} us, "
          f">= {GOAL_PEER_RATIO:g}x llm-analysis {version}")
    for r in rows:
        peer = f"{r.peer_us:>17.1f}{r.peer_us / r.same_us:>10.1f}" if r.peer_us else f"{'n/a':>17}"
        print(f"{r.case:<36}{r.same_us:>12.1f}{r.new_us:>12.1f}{peer}")


if __name__ == "__main__":
    main()
