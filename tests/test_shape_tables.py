"""The search's shape tables are kept per search space for the next question, whatever its
sequence length (``shape_tables.py``): that is exact only while nothing in them reads the
length. If a change makes the leanest layout or a count's structures depend on it, these tests
name the job."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from service.core.hardware.gpus import find_gpu
from service.core.job.request import EstimateRequest
from service.core.job.resolve import resolve
from service.core.planning.entry import make_plan
from service.core.planning.layout_totals import clear_tables
from service.core.planning.layouts import leanest, structures
from service.core.planning.search_setup import build_space

JOBS: list[dict[str, Any]] = [
    {"model": "llama-3.1-405b", "global_batch": 2048},
    {"model": "mixtral-8x7b", "global_batch": 128},
    {"model": "llama-3-8b", "micro_batch": 4, "global_batch": 256},
    {"model": "qwen2.5-14b", "task": "finetune", "lora_rank": 16},
]
LENGTHS = (8192, 8320)  # the same context-parallel sizes (1, 2, 4): one search space but length


@pytest.mark.parametrize("fields", JOBS, ids=lambda f: str(f["model"]))
def test_leanest_layouts_read_no_sequence_length(fields: dict[str, Any]) -> None:
    gpu = find_gpu("h100-80gb")
    short, long = (build_space(resolve(EstimateRequest(**fields, seq_len=n, gpu="h100-80gb")), gpu)
                   for n in LENGTHS)
    assert replace(short, seq_len=0) == replace(long, seq_len=0)
    for count in (1, 8, 64, 512):
        shapes = list(structures(count, short))
        assert shapes == list(structures(count, long))
        assert [leanest(short, s) for s in shapes] == [leanest(long, s) for s in shapes]


@pytest.mark.parametrize("fields", JOBS, ids=lambda f: str(f["model"]))
def test_a_question_after_another_length_gets_the_answer_of_a_cold_search(
        fields: dict[str, Any]) -> None:
    first, then = (resolve(EstimateRequest(**fields, seq_len=n, gpu="h100-80gb"))
                   for n in LENGTHS)
    clear_tables()
    cold = make_plan(then, with_fits_on=True)
    clear_tables()
    make_plan(first, with_fits_on=True)  # warms the shape tables with the other length
    clear_tables(states=False)
    warm = make_plan(then, with_fits_on=True)
    assert warm.fits_on == cold.fits_on
    assert (warm.gpus, warm.layout, warm.estimate) == (cold.gpus, cold.layout, cold.estimate)
    clear_tables()
