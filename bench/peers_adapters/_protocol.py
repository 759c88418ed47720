"""The JSON exchange between ``bench/peers.py`` and one adapter. Standard library only: it runs in a
peer's virtualenv.

stdin: ``{"jobs": [job, ...]}``, a job being one measured run described peer-neutrally: ``id``,
``kind`` (train | infer), the run's scenario fields (train: ``method`` full | lora | qlora, ``seq``,
``mb``, ``ckpt``, ``precision`` bf16_mixed | bf16, ``optim`` adamw_fused | adamw_foreach | adamw_8bit,
``rank``, ``targets`` all_linear | attention, ``attn`` sdpa | eager; infer: ``batch``, ``ctx``,
``decode_tokens``), ``model`` (``id``, ``hf_repo``, ``params``, ``arch``: fitcheck's preset) and
``gpu`` (``name``, ``total_bytes``).

stdout: ``{"peer", "version", "results": [result, ...]}``, a result being ``id``, ``total_bytes``
(the peer's estimate of the job's GPU memory, or null), ``reason`` (why null), ``own_verdict`` (the
peer's own fit wording, if it has one) and ``detail`` (its breakdown, for the per-run JSON).
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable
from importlib.metadata import version
from typing import Any

Job = dict[str, Any]
Answer = dict[str, Any]
Estimator = Callable[[Job], Answer]


class CannotExpress(Exception):
    """The peer has no setting for this job: the run is n/a for it."""


def serve(dist: str, estimate: Estimator) -> None:
    """Answer every job read from stdin; the peer's own prints go to stderr, not into the JSON."""
    request = json.load(sys.stdin)
    out = sys.stdout
    with contextlib.redirect_stdout(sys.stderr):
        results = [_answer(job, estimate) for job in request["jobs"]]
    json.dump({"peer": dist, "version": version(dist), "results": results}, out)
    out.write("\n")


def _answer(job: Job, estimate: Estimator) -> Answer:
    try:
        answer = estimate(job)
    except CannotExpress as exc:
        return {"id": job["id"], "total_bytes": None, "reason": f"cannot express: {exc}"}
    except Exception as exc:  # the peer refused or crashed: n/a, with its own words
        text = str(exc).strip().splitlines()
        first = text[0] if text else ""
        return {"id": job["id"], "total_bytes": None, "reason": f"{type(exc).__name__}: {first[:300]}"}
    return {"id": job["id"], "reason": None, **answer}


def gated(job: Job) -> bool:
    """Whether the model's MLP is gated (SwiGLU / GeGLU: three matrices) rather than plain (two)."""
    return str(job["model"]["arch"].get("mlp", "gated")) == "gated"
