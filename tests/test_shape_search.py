"""The shape search's shortcuts rest on two facts of the memory model, held here for every
kind of job: with the shape fixed, more data-parallel ranks never need more memory per GPU
(the bisection), and a larger pipeline with the same layers per stage never needs less
(the dominated stage counts). And the expert-parallel size is part of a shape, so a MoE table
finds layouts whose dp suits a smaller EP."""

from __future__ import annotations

from typing import Any

import pytest

from service.core.hardware.gpus import find_gpu
from service.core.job.request import EstimateRequest
from service.core.job.resolve import resolve
from service.core.memory.serving import serving_weights
from service.core.memory.serving_split import busiest_share
from service.core.model.tensor_parallel import serving_tp_sizes
from service.core.planning.fits_on import fits_on
from service.core.planning.layout_totals import LayoutTotals
from service.core.planning.layouts import Structure, leanest
from service.core.planning.search import shape_expert_sizes
from service.core.planning.search_setup import build_space

JOBS: list[dict[str, Any]] = [
    {"model": "llama-3.1-70b", "seq_len": 8192, "global_batch": 512},
    {"model": "llama-3.1-405b", "seq_len": 8192},
    {"model": "qwen2.5-32b", "task": "finetune", "lora_rank": 64, "global_batch": 64},
    {"model": "qwen2.5-32b", "task": "finetune", "quantization": "nf4", "global_batch": 64},
    {"model": "gemma-2-9b", "optimizer": "adafactor", "global_batch": 256},
    {"model": "mixtral-8x7b", "seq_len": 4096, "global_batch": 256},
    {"model": "deepseek-v3", "seq_len": 4096},
]


def _lean_total(totals: LayoutTotals, resolved: Any, dp: int, tp: int, pp: int, cp: int,
                ep: int) -> int | None:
    space = build_space(resolved, find_gpu("h100-80gb"))
    layout = leanest(space, Structure(dp, tp, pp, cp, ep))
    return totals.total(layout) if layout is not None else None


@pytest.mark.parametrize("fields", JOBS, ids=lambda f: "-".join(str(v) for v in f.values()))
def test_memory_per_gpu_is_monotone_where_the_search_assumes_it(fields: dict[str, Any]) -> None:
    resolved = resolve(EstimateRequest(**fields, gpu="h100-80gb"))
    totals = LayoutTotals(resolved)
    space = build_space(resolved, find_gpu("h100-80gb"))
    layers = resolved.job.arch.layers
    ep = shape_expert_sizes(space)[-1] if resolved.job.arch.moe is not None else 1
    checked = 0
    for tp in (1, 2):
        for pp in (2, 3, layers // 3 + 1, layers // 2 + 1):
            same_stages = [q for q in range(pp + 1, layers + 1)
                           if -(-layers // q) == -(-layers // pp)]
            previous = None
            for dp in (ep, 2 * ep, 4 * ep, 8 * ep):
                here = _lean_total(totals, resolved, dp, tp, pp, 1, ep)
                if here is None:
                    continue
                if previous is not None:
                    assert here <= previous, (tp, pp, dp)  # more dp: never more per GPU
                previous = here
                for larger in same_stages[:3]:
                    more = _lean_total(totals, resolved, dp, tp, larger, 1, ep)
                    assert more is None or more >= here, (tp, pp, larger, dp)
                    checked += 1
    assert checked >= 3


def test_a_moe_table_finds_layouts_whose_dp_suits_a_smaller_expert_split() -> None:
    """DeepSeek-V3 on 24 GB cards: EP=16 with dp=16 (not EP=128, which needs dp in 128s)."""
    rows = {r.gpu_id: r for r in fits_on(resolve(EstimateRequest(model="deepseek-v3",
                                                                 seq_len=8192)))}
    row = rows["l4-24gb"]
    assert row.gpus is not None and row.gpus <= 4096, row
    assert row.total_bytes is not None and row.total_bytes <= row.budget_bytes


@pytest.mark.parametrize("model", ["llama-3.1-70b", "mixtral-8x22b", "deepseek-v3", "gemma-2-9b",
                                   "qwen3-235b-a22b", "llama-4-scout"])
@pytest.mark.parametrize("quantization", ["none", "awq", "fp8"])
def test_no_serving_gpu_holds_less_than_an_even_share_of_the_weights(
        model: str, quantization: str) -> None:
    """The serving search skips an engine whose even share of the weights fills the budget
    (``serving_plan.best_shape``): each GPU holds at least that share, pipeline stages included."""
    arch = resolve(EstimateRequest(model=model, task="infer")).job.arch
    whole = serving_weights(arch, quantization).bytes
    for tp in serving_tp_sizes(arch, 64, 64):
        for pp in (1, 2, 3, 5, 8, arch.layers // 2):
            if pp > arch.layers:
                continue
            share = busiest_share(arch, tp, pp) if pp > 1 else None
            per_gpu = serving_weights(arch, quantization, 1.0, tp * pp, share).bytes
            assert per_gpu * tp * pp >= whole - tp * pp, (tp, pp)
