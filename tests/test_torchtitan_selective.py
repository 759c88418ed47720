"""Selective recompute in torchtitan is its op-level policy, not Megatron-LM's core-attention
recompute (``saved_op_sac.py``): torchtitan's own Llama 3.1 8B recipe fits where torchtitan
measured it. The reference figures are torchtitan's published peaks (pytorch/torchtitan
``benchmarks/llama3_h100_202412_torchtitan.md``, Tables 1 and 3: FSDP, eager, local batch 2,
seq 8192 (the recipe's), selective activation checkpointing, H100s), not runs fitcheck made."""

from __future__ import annotations

import pytest

from service.core.job.request import EstimateRequest
from service.core.job.resolve import resolve
from service.core.memory.activations import activation_breakdown, layer_setup
from service.core.memory.job_memory import estimate
from service.core.memory.saved_op_sac import op_sac_saved
from service.core.planning.step_time import RECOMPUTE_FACTOR, op_sac_factor

GIB = 2**30
TORCHTITAN_8B_SAC = [(8, 82.4), (128, 67.0)]  # GPUs, Memory (GiB) in Tables 1 and 3


def _recipe(gpus: int, recompute: str = "selective", framework: str = "fsdp") -> EstimateRequest:
    return EstimateRequest(model="llama-3.1-8b", seq_len=8192, micro_batch=2, zero_stage=3,
                           framework=framework, recompute=recompute, tp=1, gpu="h100-80gb",
                           gpu_count=gpus)


@pytest.mark.parametrize(("gpus", "measured_gib"), TORCHTITAN_8B_SAC)
def test_torchtitans_8b_recipe_is_within_10_percent_of_its_published_peak(
        gpus: int, measured_gib: float) -> None:
    total = estimate(resolve(_recipe(gpus)).job).total_bytes / GIB
    assert abs(total - measured_gib) <= 0.10 * measured_gib, (total, measured_gib)


def test_a_layer_keeps_its_input_every_second_matmul_and_sdpa_output() -> None:
    job = resolve(_recipe(8)).job
    names = [s.name for s in op_sac_saved(job.arch, layer_setup(job))]
    assert names == ["layer input", "q output (matmul 1)", "v output (matmul 3)",
                     "w1 output (matmul 5)", "w2 output (matmul 7)", "SDPA output",
                     "SDPA fp32 log-sum-exp"]


def test_op_level_recompute_keeps_less_than_none_and_more_than_full() -> None:
    kept = {r: activation_breakdown(resolve(_recipe(8, r)).job).kept_layer_bytes
            for r in ("none", "selective", "full")}
    assert kept["full"] < kept["selective"] < kept["none"] / 2


def test_megatrons_selective_recompute_still_drops_only_core_attention() -> None:
    """With FlashAttention there is no s x s matrix to drop: Megatron's selective keeps what
    no recompute keeps."""
    def kept(recompute: str) -> float:
        request = _recipe(8, recompute, "megatron")
        return activation_breakdown(resolve(request).job).kept_layer_bytes

    assert kept("selective") == kept("none")


def test_op_level_recompute_costs_every_second_matmul_not_a_whole_forward() -> None:
    """Llama 3.1 8B: k, o and w3 are 37% of a layer's matmul FLOPs, a twelfth of the step."""
    arch = resolve(_recipe(8)).job.arch
    assert op_sac_factor(arch) == pytest.approx(1 + 0.365 / 3, abs=0.005)
    assert op_sac_factor(arch) < RECOMPUTE_FACTOR["full"]
