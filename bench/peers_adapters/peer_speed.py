"""Time a peer's estimate of a job, in the peer's own virtualenv (standard library only, like every
adapter here).

stdin: ``{"module": "peer_llm_analysis", "jobs": [job, ...], "number": N, "repeat": R}`` (jobs as
in ``_protocol``); stdout: ``{"peer", "version", "results": [{"id", "us"}]}``: process CPU time per
call of the adapter's ``run(job)`` (the peer's own objects built and its estimate computed, as a
caller would), the median of R rounds of N calls.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import logging
import statistics
import sys
import time
from importlib.metadata import version

PEERS = {"peer_llm_analysis": "llm-analysis", "peer_fitcheck_llm": "fitcheck-llm",
         "peer_canifinetune": "canifinetune"}


def per_call_us(run: object, job: dict[str, object], number: int, repeat: int) -> float:
    rounds = []
    run(job)  # type: ignore[operator]
    for _ in range(repeat):
        start = time.process_time()
        for _ in range(number):
            run(job)  # type: ignore[operator]
        rounds.append((time.process_time() - start) / number * 1e6)
    return statistics.median(rounds)


def main() -> None:
    request = json.load(sys.stdin)
    module = importlib.import_module(f"bench.peers_adapters.{request['module']}")
    peer_logger = getattr(module, "logger", None)  # llm-analysis logs a warning per call
    if peer_logger is not None:
        peer_logger.setLevel(logging.ERROR)
    out = sys.stdout
    with contextlib.redirect_stdout(sys.stderr):
        results = [{"id": job["id"], "us": per_call_us(module.run, job, request["number"],
                                                        request["repeat"])}
                   for job in request["jobs"]]
    dist = PEERS[request["module"]]
    json.dump({"peer": dist, "version": version(dist), "results": results}, out)


if __name__ == "__main__":
    main()
