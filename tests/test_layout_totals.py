"""The planner's shortcuts are exact: its cached totals are the engine's, its two lower bounds
never exceed a total, and the step states it shares between layouts that differ only in
activation knobs are what the engine computes for each of them. If a change to the memory
model breaks one of these (a component of ``step_states`` starts reading the micro-batch, a
phase drops the optimizer state), these tests name the layout."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from service.core.hardware.gpus import find_gpu
from service.core.job.request import EstimateRequest
from service.core.job.resolve import resolve
from service.core.memory.activations import activation_breakdown, activations_component
from service.core.memory.overhead import overhead_floor
from service.core.memory.training_memory import training_estimate, training_total
from service.core.memory.training_phases import step_states
from service.core.planning.layout_totals import LayoutTotals
from service.core.planning.layouts import knob_layouts, structures
from service.core.planning.search_setup import build_space

JOBS: list[dict[str, Any]] = [
    {"model": "llama-3-8b", "seq_len": 4096, "global_batch": 64},
    {"model": "llama-3.1-70b", "seq_len": 8192},
    {"model": "mixtral-8x7b", "seq_len": 4096, "global_batch": 128},
    {"model": "qwen2.5-7b", "task": "finetune", "lora_rank": 16},
    {"model": "qwen2.5-7b", "task": "finetune", "quantization": "nf4"},
    {"model": "gemma-2-9b", "precision": "fp32", "optimizer": "adafactor", "framework": "hf"},
    {"model": "llama-2-7b", "offload": "optimizer", "zero_stage": 3},
    {"model": "gpt2-xl", "seq_len": 1024, "activation_model": "korthikanti",
     "overhead_model": "flat_10pct"},
]


@pytest.mark.parametrize("fields", JOBS, ids=lambda f: "-".join(str(v) for v in f.values()))
def test_bounds_and_shared_states_are_exact(fields: dict[str, Any]) -> None:
    resolved = resolve(EstimateRequest(**fields, gpu="h100-80gb"))
    totals = LayoutTotals(resolved)
    space = build_space(resolved, find_gpu("h100-80gb"))
    checked = 0
    for gpus in (1, 8, 32):
        for structure in structures(gpus, space):
            for layout in knob_layouts(space, structure):
                job = totals.job(layout)
                total = totals.total(layout)
                assert total == training_estimate(job).total_bytes, layout
                assert totals.lower_bound(layout) <= total, layout
                with_activations = totals.lower_bound(layout) + activations_component(
                    job, activation_breakdown(job)).bytes
                assert with_activations <= total, layout
                assert totals._states(layout) == step_states(job), layout
                assert overhead_floor(totals._overhead_job(layout, None), total) == \
                    overhead_floor(job, total), layout
                assert totals.fits(layout, total) and not totals.fits(layout, total - 1)
                checked += 1
    assert checked >= 5


def test_totals_do_not_depend_on_the_gpu_type() -> None:
    """One table serves every GPU type (``totals_for`` keys tables without the GPU)."""
    resolved = resolve(EstimateRequest(model="llama-3.1-70b", seq_len=8192, gpu="h100-80gb",
                                       precision="bf16_mixed"))
    totals = LayoutTotals(resolved)
    space = build_space(resolved, find_gpu("h100-80gb"))
    for structure in structures(16, space):
        for layout in knob_layouts(space, structure):
            job = totals.job(layout)
            on_v100 = replace(job, gpu=find_gpu("v100-16gb"))
            assert training_total(on_v100) == training_total(job), layout


@pytest.mark.parametrize("fields", JOBS[:4], ids=lambda f: "-".join(str(v) for v in f.values()))
def test_a_new_question_on_the_same_model_reuses_exact_model_states(
        fields: dict[str, Any]) -> None:
    """A second job of the family (another sequence length, micro-batch and global batch)
    takes its model states from the first job's table, and its totals stay the engine's."""
    first = resolve(EstimateRequest(**fields, gpu="h100-80gb"))
    second = resolve(EstimateRequest(**{**fields, "seq_len": 2048, "micro_batch": 2,
                                        "global_batch": 256}, gpu="h100-80gb"))
    warm, fresh = LayoutTotals(first), LayoutTotals(second)
    assert fresh._shared is warm._shared
    space = build_space(first, find_gpu("h100-80gb"))
    for structure in structures(8, space):
        for layout in knob_layouts(space, structure):
            warm.total(layout)
    shared_before = len(warm._shared.step_states)
    space = build_space(second, find_gpu("h100-80gb"))
    checked = 0
    for structure in structures(8, space):
        for layout in knob_layouts(space, structure):
            job = fresh.job(layout)
            assert fresh.total(layout) == training_estimate(job).total_bytes, layout
            assert fresh._states(layout) == step_states(job), layout
            checked += 1
    assert checked >= 3 and len(warm._shared.step_states) == shared_before
