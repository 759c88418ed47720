"""The reports the page tests look at: a training job, a serving job (Qwen2.5-72B AWQ, 32k
context, 32 users on RTX 4090s), a job that does not fit on the GPUs given (with fixes), and a
job with no GPU (the catalog), and the 405B plan whose Megatron-LM launch lines are the longest,
each answered by the engine with its permalink and its own launch configs.
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from typing import Any

from service.answers import compute_answer
from service.core.job.request import EstimateRequest
from service.core.report.answer_types import Answer
from service.permalink import link, normalise

BASE = "http://fitcheck.test/"
CASES: dict[str, dict[str, Any]] = {
    "training": {"model": "llama-3-8b", "seq_len": 4096, "zero_stage": 3, "gpu": "a100-40gb",
                 "tokens": 1e12},
    "serving": {"model": "qwen2.5-72b", "task": "infer", "quantization": "awq",
                "seq_len": 32768, "concurrent": 32, "gpu": "rtx4090-24gb"},
    "does-not-fit": {"model": "llama-3.1-70b", "seq_len": 8192, "gpu": "a100-40gb",
                     "gpu_count": 8},
    "catalog": {"model": "llama-3-8b", "seq_len": 4096},
    "megatron-405b": {"model": "llama-3.1-405b", "seq_len": 8192, "global_batch": 2048,
                      "gpu": "h100-80gb"},
}

@cache
def plain_answer(case: str) -> Answer:
    """The engine's answer with its permalink, as the service renders it for a browser."""
    request = normalise(EstimateRequest(**CASES[case]))
    answer = compute_answer(request, fits_on=True).answer
    return replace(answer, link=link(BASE, request))


def report_answer(case: str) -> Answer:
    """The engine's answer with its own launch configs (none for a plan that does not fit)."""
    return plain_answer(case)
