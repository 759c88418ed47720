"""The worked examples of the seed documents (shared/seed-cases.md), slips corrected."""

from __future__ import annotations

from dataclasses import replace

import pytest
from engine_support import assumption_lines, estimate_of

from service.core.compute.training_time import training_time
from service.core.hardware.gpus import find_gpu
from service.core.job.request import EstimateRequest
from service.core.job.resolve import resolve
from service.core.memory.serving import kv_cache_bytes, serving_weight_bytes
from service.core.model.architecture import Architecture
from service.core.model.params import parameter_count
from service.core.model.presets import find_preset
from service.core.planning.seed_method import even_split_gpu_count

GB = 1e9


def gb(n: float) -> float:
    return round(n / GB, 1)


# S1: the "Training Memory Calculator" with its own assumptions chosen explicitly (its 2-byte
# gradients are DeepSpeed's accounting; selective recompute alone would default to Megatron-LM).
S1 = EstimateRequest(
    model="llama-3-8b", seq_len=4096, micro_batch=1, precision="bf16_mixed", optimizer="adamw",
    recompute="selective", zero_stage=0, activation_model="korthikanti",
    overhead_model="flat_10pct", framework="deepspeed",
)


def test_s1_breakdown_matches_the_seed_to_a_tenth_of_a_gb() -> None:
    per = estimate_of(S1).per_gpu_bytes
    assert gb(per["weights"]) == 16.1
    assert gb(per["gradients"]) == 16.1
    assert gb(per["optimizer"]) == 96.4
    assert gb(per["activations"]) == 18.3
    assert gb(per["overhead"]) == 14.7
    assert gb(per["total"]) == 161.4


@pytest.mark.parametrize(
    ("gpu", "fits"),
    [("a100-40gb", False), ("a100-80gb", False), ("h100-80gb", False), ("h200-141gb", False),
     ("mi300x-192gb", True)],
)
def test_s1_fits_on(gpu: str, fits: bool) -> None:
    assert estimate_of(replace(S1, gpu=gpu)).fits is fits


def test_s1_b200_fits() -> None:
    b200 = next(g for g in ("b200-192gb", "b200-180gb") if _known_gpu(g))
    assert estimate_of(replace(S1, gpu=b200)).fits is True


def _known_gpu(name: str) -> bool:
    try:
        find_gpu(name)
    except LookupError:
        return False
    return True


def test_s1_default_answer_differs_and_says_why() -> None:
    request = EstimateRequest(model="llama-3-8b", seq_len=4096, recompute="selective")
    default = estimate_of(request)
    # HF activation profile includes the fp32 logits of a 128k vocabulary; no flat 10%.
    assert default.per_gpu_bytes["activations"] != estimate_of(S1).per_gpu_bytes["activations"]
    assert any("activation profile" in a for a in assumption_lines(request))


# S2: model states under ZeRO, 7B on 8 GPUs (16 bytes/param mixed-precision AdamW).
@pytest.mark.parametrize(("stage", "expected_gb"), [(0, 112.0), (1, 38.5), (2, 26.25), (3, 14.0)])
def test_s2_model_states_per_gpu(stage: int, expected_gb: float) -> None:
    est = estimate_of(EstimateRequest(params_b=7, gpu_count=8, zero_stage=stage))
    states = sum(est.per_gpu_bytes[k] for k in ("weights", "gradients", "optimizer"))
    assert states / GB == pytest.approx(expected_gb, abs=0.01)


def test_s2_70b_tp8_pp4_dp4_zero1() -> None:
    # the seed's 16 bytes/param (2-byte gradients) is DeepSpeed's accounting, stated here: with
    # TP and PP the default stack is Megatron-LM, whose gradients are fp32
    est = estimate_of(EstimateRequest(params_b=70, gpu_count=128, tp=8, pp=4, zero_stage=1,
                                      framework="deepspeed"))
    assert est.job.parallel.dp == 4
    states = sum(est.per_gpu_bytes[k] for k in ("weights", "gradients", "optimizer"))
    # The seed divides 70B evenly by 32 (15.3 GB); fitcheck puts the embedding on the first
    # stage and the LM head on the last, so the busiest rank holds ~1% more.
    assert states / GB == pytest.approx(15.3, rel=0.015)
    assert states / GB >= 15.3


# S3: the 7B GeLU/LayerNorm model, global batch 128, seq 4096, on A100 40GB.
S3_ARCH = Architecture(layers=32, hidden=4096, heads=32, head_dim=128, ffn=16384, vocab=32000,
                       mlp="plain", activation="gelu", norm="layernorm", name="s3-7b")


def test_s3_parameter_count_without_norms() -> None:
    norms = (2 * 32 + 1) * 2 * 4096
    assert (parameter_count(S3_ARCH) - norms) / 1e9 == pytest.approx(6.70, abs=0.005)


def _s3_job(**changes: object) -> EstimateRequest:
    base = EstimateRequest(arch=S3_ARCH.to_dict(), params_b=7, seq_len=4096, micro_batch=128,
                           precision="fp16_mixed", activation_model="seed_s3", flash_attn=False)
    return replace(base, **changes)  # type: ignore[arg-type]


def test_s3_activation_figures() -> None:
    from service.core.memory.activations import activation_breakdown, seed_s3_block_bytes

    job = resolve(_s3_job()).job
    assert seed_s3_block_bytes(job) / GB == pytest.approx(343.6, abs=0.05)
    assert activation_breakdown(job).layers_bytes / GB == pytest.approx(10995, abs=1)
    ckpt = activation_breakdown(resolve(_s3_job(recompute="full")).job)
    assert ckpt.layers_bytes / GB == pytest.approx(137.4, abs=0.05)


@pytest.mark.parametrize(
    ("zero", "recompute", "flash", "gpus"),
    [(1, "none", False, 924), (2, "none", False, 427), (3, "none", False, 278),
     (3, "full", False, 15), (3, "full", True, 8)],
)
def test_s3_seed_method_counts(zero: int, recompute: str, flash: bool, gpus: int) -> None:
    job = resolve(_s3_job(zero_stage=zero, recompute=recompute, flash_attn=flash)).job
    count = even_split_gpu_count(job, capacity_bytes=40 * 10**9)
    assert count.gpus == gpus
    assert "whole sequences" in count.caveat


def test_s3_one_sequence_alone_holds_86_gb() -> None:
    job = resolve(_s3_job(micro_batch=1)).job
    assert even_split_gpu_count(job, 40 * 10**9).shared_bytes > 85 * GB


# S4: inference memory.
@pytest.mark.parametrize(("size", "fp32", "fp16"), [(7, 28, 14), (13, 52, 26), (70, 280, 140)])
def test_s4_weights(size: int, fp32: float, fp16: float) -> None:
    for quant, expected in (("fp32", fp32), ("fp16", fp16)):
        est = estimate_of(EstimateRequest(params_b=size, task="infer", quantization=quant))
        assert est.per_gpu_bytes["weights"] / GB == pytest.approx(expected, rel=1e-6)


def test_s4_int8_int4_weights_carry_their_scales() -> None:
    arch = find_preset("llama-2-7b").arch
    n = parameter_count(arch)
    # int8 keeps embeddings/LM head in 16-bit; int4 (GPTQ/AWQ group 128) adds 0.156 bit scales.
    assert n / GB < serving_weight_bytes(arch, "int8") / GB < 1.05 * n / GB
    assert 0.5 * n < serving_weight_bytes(arch, "int4") < 0.6 * n


def test_s4_kv_cache_llama2_7b() -> None:
    arch = find_preset("llama-2-7b").arch
    assert kv_cache_bytes(arch, "fp16", 4096, 1) / GB == pytest.approx(2.15, abs=0.005)
    assert kv_cache_bytes(arch, "fp16", 4096, 1) / 2**30 == pytest.approx(2.0)
    assert kv_cache_bytes(arch, "fp16", 131072, 1) / 2**30 == pytest.approx(64.0)


def test_s4_qwen25_7b_kv_cache_corrected() -> None:
    arch = find_preset("qwen2.5-7b").arch
    assert (arch.layers, arch.kv_heads, arch.head_dim_resolved) == (28, 4, 128)
    n = kv_cache_bytes(arch, "fp16", 32768, 16)
    assert n / GB == pytest.approx(30.06, abs=0.005)
    assert n / 2**30 == pytest.approx(28.0)


def test_s4_training_model_states() -> None:
    est = estimate_of(EstimateRequest(params_b=7, seq_len=4096, micro_batch=32))
    per = est.per_gpu_bytes
    assert (per["weights"], per["gradients"], per["optimizer"]) == (14 * 10**9, 14 * 10**9,
                                                                     84 * 10**9)


# S5: compute and time, the activation slip, the pure-fp32 slip.
def test_s5_compute_and_time() -> None:
    gpu = find_gpu("h100-80gb")
    c = training_time(params_active=7e9, tokens=1e12, gpus=256, peak_flops=989e12, mfu=0.40,
                      include_attention=False)
    assert c.total_flops == pytest.approx(4.2e22)
    assert c.seconds == pytest.approx(4.15e5, rel=0.002)
    assert c.days == pytest.approx(4.8, abs=0.05)
    assert c.gpu_hours == pytest.approx(29_500, rel=0.002)
    assert gpu.bf16_dense_tflops == pytest.approx(989, abs=1)


def test_s5_activation_example_is_235_gb_not_67() -> None:
    arch = Architecture(layers=24, hidden=4096, heads=16, ffn=16384, vocab=50257, mlp="plain",
                        norm="layernorm", name="s5")
    est = estimate_of(EstimateRequest(arch=arch.to_dict(), seq_len=128, micro_batch=512,
                                   activation_model="korthikanti", flash_attn=False))
    assert est.per_gpu_bytes["activations"] / GB == pytest.approx(235.1, abs=0.05)


def test_s5_pure_fp32_is_16_bytes_per_param() -> None:
    est = estimate_of(EstimateRequest(params_b=7, precision="fp32"))
    per = est.per_gpu_bytes
    assert per["weights"] + per["gradients"] + per["optimizer"] == 16 * 7 * 10**9
