"""Every figure a person reads reproduces from the terms printed next to it: for every preset
over a grid of jobs, each component's expression evaluated with its terms gives its bytes, its
printed values are the expression with those terms put in, and the components add up to the
per-GPU total."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import pytest

from service.answers import compute_answer
from service.core.errors import InvalidInput
from service.core.job.request import EstimateRequest
from service.core.job.resolve import resolve
from service.core.memory.breakdown import COMPONENT_KEYS
from service.core.memory.formula import BadExpression, compile_expression, evaluate
from service.core.memory.job_memory import estimate
from service.core.model.presets import all_presets
from service.core.report.answer_types import FormulaEntry, PerGpuBytes
from service.core.report.build_answer import formula_entries
from service.core.report.formula_text import with_values

GRID: list[dict[str, Any]] = [
    {},
    {"zero_stage": 1, "gpu_count": 8},
    {"zero_stage": 2, "gpu_count": 8, "global_batch": 64},
    {"zero_stage": 3, "gpu_count": 16, "recompute": "full"},
    {"zero_stage": 3, "gpu_count": 8, "offload": "optimizer_and_params"},
    {"zero_stage": 1, "gpu_count": 8, "offload": "optimizer"},
    {"tp": 2, "pp": 2, "gpu_count": 8, "sequence_parallel": True, "recompute": "selective"},
    {"pp": 2, "gpu_count": 4, "pp_schedule": "interleaved", "virtual_stages": 2,
     "global_batch": 32},
    {"cp": 2, "gpu_count": 4, "seq_len": 8192},
    {"ep": 2, "gpu_count": 4, "zero_stage": 1},
    {"precision": "fp8", "gpu_count": 8, "zero_stage": 2},
    {"precision": "fp32", "optimizer": "sgd_momentum"},
    {"precision": "bf16", "optimizer": "adamw_8bit", "framework": "hf"},
    {"optimizer": "adafactor", "framework": "fsdp", "zero_stage": 3, "gpu_count": 4},
    {"framework": "megatron", "tp": 2, "gpu_count": 2, "flash_attn": False, "seq_len": 1024},
    {"overhead_model": "flat_10pct", "activation_model": "korthikanti", "recompute": "selective"},
    {"task": "finetune", "lora_rank": 16},
    {"task": "finetune", "lora_rank": 64, "quantization": "nf4", "lora_targets": "attention"},
    {"task": "infer", "seq_len": 8192, "concurrent": 8},
    {"task": "infer", "quantization": "awq", "kv_cache_dtype": "fp8", "gpu_count": 2},
    {"task": "infer", "quantization": "gguf-q4_k_m", "seq_len": 32768, "batch": 2},
    {"task": "infer", "precision": "fp8", "tp": 2, "pp": 2, "gpu_count": 4},
]
PRESETS = all_presets()


def check_entries(entries: list[FormulaEntry], per_gpu: PerGpuBytes) -> None:
    for entry in entries:
        value = evaluate(entry.expression, entry.terms)
        assert abs(value - entry.bytes) <= 0.5, (entry.component, entry.expression, entry.terms)
        assert entry.values == with_values(entry.expression, entry.terms)
        assert entry.component in COMPONENT_KEYS
    totals = {f.name: getattr(per_gpu, f.name) for f in fields(per_gpu)}
    for key in COMPONENT_KEYS:
        assert totals[key] == sum(e.bytes for e in entries if e.component == key), key
    assert totals["total"] == sum(e.bytes for e in entries)


@pytest.mark.parametrize("preset", PRESETS, ids=[p.id for p in PRESETS])
def test_every_formula_of_every_preset_reproduces_its_bytes(preset: Any) -> None:
    checked = 0
    for changes in GRID:
        request = EstimateRequest(**{"model": preset.id, **changes})
        try:
            est = estimate(resolve(request).job)
        except InvalidInput:
            continue  # a layout this model cannot take (heads, experts, positions)
        entries = formula_entries(est)
        check_entries(entries, PerGpuBytes(**est.per_gpu_bytes))
        checked += 1
    assert checked >= len(GRID) // 2


@pytest.mark.parametrize("request_", [
    EstimateRequest(model="mixtral-8x7b", ep=8, zero_stage=3, gpu_count=16, gpu="h100-80gb"),
    EstimateRequest(model="llama-3.1-8b", task="infer", quantization="awq", gpu="a10g-24gb"),
    EstimateRequest(model="deepseek-v3", task="infer", seq_len=32768, concurrent=8,
                    gpu="h200-141gb"),
    EstimateRequest(model="llama-3.1-70b", seq_len=8192, global_batch=512, gpu="h100-80gb"),
    EstimateRequest(model="llama-3.1-70b", seq_len=8192, global_batch=512, gpu="h100-80gb",
                    gpu_count=8),
    EstimateRequest(model="qwen2.5-72b", task="finetune", lora_rank=16, quantization="nf4",
                    gpu="rtx4090-24gb"),
], ids=["mixtral-ep8-zero3", "awq-serving", "mla-serving", "70b-fewest", "70b-short",
        "qlora-72b"])
def test_every_figure_of_an_answer_reproduces(request_: EstimateRequest) -> None:
    """The top-level figures, the layout as stated and the planner's layout alike."""
    answer = compute_answer(request_).answer
    check_entries(answer.formulas, answer.per_gpu_bytes)
    for other in (answer.as_stated, answer.planner.layout if answer.planner else None):
        if other is not None:
            check_entries(other.formulas, other.per_gpu_bytes)


def test_expressions_are_plain_arithmetic() -> None:
    for bad in ("__import__('os')", "params.real", "[1][0]", "lambda: 1", "x if y else z",
                "max(a, b, key=c)", "'text'"):
        with pytest.raises((BadExpression, SyntaxError)):
            compile_expression(bad)
    assert evaluate("ceil(a / b) + max(c, 2) - min(c, 1) // 1", {"a": 7, "b": 2, "c": 3}) == 6
    with pytest.raises(BadExpression):
        evaluate("a + b", {"a": 1})


def test_the_drifts_the_issue_found_are_gone() -> None:
    """Mixtral EP=8 under ZeRO-3 on 16 GPUs, and AWQ serving: printed values give the bytes."""
    moe = estimate(resolve(EstimateRequest(model="mixtral-8x7b", ep=8, zero_stage=3,
                                           gpu_count=16)).job)
    awq = estimate(resolve(EstimateRequest(model="llama-3-8b", task="infer",
                                           quantization="awq")).job)
    for est in (moe, awq):
        weights = next(c for c in est.components if c.key == "weights")
        assert round(evaluate(weights.expression, weights.term_map)) == weights.bytes
    assert awq.per_gpu_bytes["weights"] / 1e9 == pytest.approx(5.73, abs=0.05)
