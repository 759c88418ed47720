"""Activation and optimizer memory against what real PyTorch / transformers models keep.

The measurements are committed data (``bench/measure/results``, made by the scripts beside
them with torch and transformers on CPU); these tests need neither.
"""

from __future__ import annotations

import json
from collections import defaultdict

import pytest

from bench.accuracy import RESULTS, Comparison, activation_comparisons, optimizer_comparisons

ARCHITECTURES = ("llama", "mistral", "qwen2", "qwen3", "gemma2", "phi3", "gpt2", "gpt2_nodrop",
                 "gpt_neox", "mixtral")
ACTIVATIONS = activation_comparisons()


def test_measurements_cover_every_architecture_in_both_attention_implementations() -> None:
    seen: dict[str, set[str]] = defaultdict(set)
    for row in ACTIVATIONS:
        arch, _, attention, _ = row.name.split("/")
        seen[arch].add(attention)
    for arch in ARCHITECTURES:
        # transformers refuses SDPA for Gemma 2 (soft-capping): eager is what it runs
        expected = {"eager"} if arch == "gemma2" else {"eager", "sdpa"}
        assert expected <= seen[arch], arch
    header = json.loads((RESULTS / "cpu_activations.json").read_text())["header"]
    assert header["torch"].startswith("2.13.0") and header["device"] == "cpu"


@pytest.mark.parametrize("row", ACTIVATIONS, ids=lambda r: f"{r.name}:{r.part}")
def test_activation_estimate_within_10_percent_of_measured(row: Comparison) -> None:
    assert abs(row.error) <= 0.10, f"measured {row.measured:,} B, estimated {row.estimated:,} B"


def test_activation_estimates_are_exact_for_the_default_implementations() -> None:
    # Only transformers' optional eager-loop MoE experts (not the default grouped_mm) differ.
    default = [r for r in ACTIVATIONS if not r.name.startswith("mixtral_eager_experts")]
    assert max(abs(r.error) for r in default) < 0.005


@pytest.mark.parametrize("row", optimizer_comparisons(), ids=lambda r: r.name)
def test_optimizer_state_and_lora_counts_match_a_real_step(row: Comparison) -> None:
    assert row.estimated == pytest.approx(row.measured, rel=1e-3)
