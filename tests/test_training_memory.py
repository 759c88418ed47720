"""Training memory: each knob moves the component it should, by the amount its formula says."""

from __future__ import annotations

from dataclasses import replace

import pytest
from engine_support import assumption_lines, estimate_of

from service.answers import compute_answer
from service.core.errors import InvalidInput, UnknownName
from service.core.hardware.gpus import find_gpu
from service.core.job.request import EstimateRequest
from service.core.job.resolve import resolve
from service.core.memory import model_state
from service.core.memory.saved_adapters import adapter_saved
from service.core.memory.saved_tensors import LayerSetup
from service.core.memory.training_phases import (
    NOT_READ_BY_STEP_STATES,
    shared_step_states,
    step_states,
)
from service.core.memory.transients import gathered_layers, gradient_buckets
from service.core.model.adapter_params import lora_params
from service.core.model.presets import all_presets, find_preset

BASE = EstimateRequest(model="llama-3-8b", seq_len=4096)
P = 8_030_261_248


def per_gpu(**changes: object) -> dict[str, int]:
    return estimate_of(replace(BASE, **changes)).per_gpu_bytes  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("precision", "optimizer", "framework", "bytes_per_param"),
    [
        ("fp32", "adamw", "deepspeed", 16),  # 4 + 4 + 8
        ("bf16_mixed", "adamw", "deepspeed", 16),  # 2 + 2 + (4 master + 8)
        ("bf16_mixed", "adamw", "megatron", 18),  # fp32 main grads
        ("bf16_mixed", "adamw", "hf", 16),  # autocast: fp32 weights + fp32 grads + 8
        ("bf16_mixed", "adamw", "fsdp", 16),  # FSDP2: sharded fp32 params and grads + 8
        ("bf16", "adamw", "deepspeed", 8),  # pure bf16: states in bf16
        ("bf16_mixed", "sgd", "deepspeed", 8),  # master only
        ("bf16_mixed", "sgd_momentum", "deepspeed", 12),
        ("bf16_mixed", "lion", "deepspeed", 12),
        ("fp8", "adamw", "deepspeed", 17),  # bf16 weights + fp8 copy + 2 + 12
    ],
)
def test_model_state_bytes_per_param(precision: str, optimizer: str, framework: str,
                                     bytes_per_param: int) -> None:
    job = resolve(replace(BASE, precision=precision, optimizer=optimizer,
                          framework=framework)).job
    states = sum(c.bytes for c in (model_state.weights(job), model_state.gradients(job),
                                   model_state.optimizer(job)))
    assert states == pytest.approx(bytes_per_param * P, rel=1e-6)


def test_8bit_adam_is_about_6_bytes_of_optimizer_per_param() -> None:
    per = per_gpu(optimizer="adamw_8bit")
    # fp32 master 4 + two uint8 states with an fp32 absmax per 256 values: 2 x (1 + 4/256)
    assert per["optimizer"] / P == pytest.approx(4 + 2 * (1 + 4 / 256), abs=0.01)


def test_adafactor_factored_moment_is_tiny() -> None:
    per = per_gpu(optimizer="adafactor")
    assert 4 * P < per["optimizer"] < 4.01 * P  # master + row/column factors


@pytest.mark.parametrize("stage", [0, 1, 2, 3])
def test_zero_stages_shard_what_the_paper_says(stage: int) -> None:
    one = per_gpu(zero_stage=stage)
    eight = per_gpu(zero_stage=stage, gpu_count=8)
    for key, needed in (("optimizer", 1), ("gradients", 2), ("weights", 3)):
        ratio = one[key] / eight[key]
        assert ratio == pytest.approx(8 if stage >= needed else 1, rel=1e-6)


def test_hsdp_shards_within_the_group_only() -> None:
    full = per_gpu(zero_stage=3, gpu_count=64)
    hsdp = per_gpu(zero_stage=3, gpu_count=64, shard_group=8)
    assert hsdp["optimizer"] == pytest.approx(8 * full["optimizer"], rel=1e-6)


def test_tensor_and_pipeline_parallelism_split_the_model() -> None:
    tp8 = per_gpu(tp=8, gpu_count=8)
    assert tp8["weights"] == pytest.approx(2 * P / 8, rel=0.01)
    pp4 = estimate_of(replace(BASE, pp=4, gpu_count=4, global_batch=16))
    # the busiest stage holds 8 layers plus the LM head (128256 x 4096)
    layer_share = (P - 2 * 128256 * 4096) / 4
    assert pp4.per_gpu_bytes["weights"] == pytest.approx(2 * (layer_share + 128256 * 4096),
                                                          rel=0.001)


def test_recompute_orders_activations() -> None:
    none, sel, full = (per_gpu(recompute=r)["activations"] for r in ("none", "selective", "full"))
    assert full < sel <= none
    # full recompute keeps one 2-byte hidden vector per token per layer, plus the logits term
    est = estimate_of(replace(BASE, recompute="full"))
    assert est.details["activation_non_layer_bytes"] + 32 * 4096 * 4096 * 2 == full


def test_eager_attention_adds_the_s_squared_matrices() -> None:
    flash = per_gpu(flash_attn=True)["activations"]
    eager = per_gpu(flash_attn=False)["activations"]
    # fp32 softmax + bf16 copy per head per key: 32 layers x 32 heads x 4096^2 x 6 B at least
    assert eager - flash > 32 * 32 * 4096**2 * 6 * 0.95


def test_selective_recompute_drops_the_s_squared_term() -> None:
    assert per_gpu(flash_attn=False, recompute="selective")["activations"] < \
        per_gpu(flash_attn=False)["activations"] / 4


def test_activations_scale_with_micro_batch_and_split_with_context_parallelism() -> None:
    one = per_gpu()["activations"]
    # everything but the rotary cos/sin tables (shared by the batch) grows with the batch
    assert per_gpu(micro_batch=4)["activations"] == pytest.approx(4 * one, rel=1e-4)
    assert per_gpu(cp=4, gpu_count=4)["activations"] == pytest.approx(one / 4, rel=1e-6)


def test_pipeline_first_stage_keeps_pp_micro_batches() -> None:
    est = estimate_of(replace(BASE, pp=4, gpu_count=4, global_batch=32, recompute="full"))
    assert est.details["pipeline_in_flight"] == 4
    inter = estimate_of(replace(BASE, pp=4, gpu_count=4, global_batch=32, pp_schedule="interleaved",
                             virtual_stages=2))
    assert inter.details["pipeline_in_flight"] == pytest.approx(4 * (1 + 3 / 8))


def test_sequence_parallel_splits_the_replicated_parts() -> None:
    tp = per_gpu(tp=8, gpu_count=8, sequence_parallel=False)["activations"]
    sp = per_gpu(tp=8, gpu_count=8, sequence_parallel=True)["activations"]
    assert sp < tp
    assert per_gpu(tp=8, gpu_count=8)["activations"] == sp  # unstated with TP: on, said so


def test_optimizer_offload_moves_state_to_cpu() -> None:
    est = estimate_of(replace(BASE, offload="optimizer", zero_stage=2, gpu_count=8))
    assert est.per_gpu_bytes["optimizer"] == 0
    # ZeRO-Offload moves the gradient partitions too (as fp32, where the CPU Adam reads them):
    # the master weights and moments (12 B) and the gradients (4 B) per parameter, / 8 ranks
    assert est.per_gpu_bytes["gradients"] == 0
    assert est.cpu_offload_bytes == pytest.approx((12 + 4) * P / 8, rel=1e-6)


def test_lora_counts_match_peft_for_llama3_8b() -> None:
    arch = find_preset("llama-3-8b").arch
    assert lora_params(arch, 16, "attention") == 13_631_488
    assert lora_params(arch, 16, "all_linear") == 41_943_040


def test_peft_all_linear_leaves_gpt_oss_fused_experts_frozen() -> None:
    """GptOssExperts holds its experts as 3-D nn.Parameters, no nn.Linear: all-linear adapts the
    attention projections only (r x (in + out) of q, k, v, o over 24 layers)."""
    arch = find_preset("gpt-oss-20b").arch
    attention = 24 * 16 * ((2880 + 4096) + 2 * (2880 + 512) + (4096 + 2880))
    assert lora_params(arch, 16, "all_linear") == lora_params(arch, 16, "attention") == attention
    assert attention == 7_962_624  # was 220,299,264 with the experts counted as adapted
    assert arch.moe is not None
    as_linears = arch.with_changes(moe=replace(arch.moe, fused_experts=False))
    experts = 24 * 32 * 16 * 3 * (2880 + 2880)  # gate, up, down of 32 experts in 24 layers
    assert lora_params(as_linears, 16, "all_linear") == attention + experts == 220_299_264


def test_llama4_all_linear_adapts_the_shared_expert_not_the_fused_routed_ones() -> None:
    arch = find_preset("llama-4-scout").arch
    attention = 48 * 16 * (2 * (5120 + 5120) + 2 * (5120 + 1024))
    shared = 48 * 16 * 3 * (5120 + 8192)
    assert lora_params(arch, 16, "all_linear") == attention + shared == 55_836_672  # was 546.6M


def test_transformers_5_fuses_every_native_moe_family_kimi_k2_remote_code_does_not() -> None:
    """transformers 5.17/5.23 (the measured stack) hold routed experts in 3-D parameters in every
    MoE family it implements; Kimi K2 loads its own modeling_deepseek.py, nn.Linear experts."""
    fused = {p.id: p.arch.moe.fused_experts for p in all_presets() if p.arch.moe is not None}
    assert fused == {name: name != "kimi-k2" for name in fused}
    mixtral = find_preset("mixtral-8x7b").arch
    assert lora_params(mixtral, 16, "all_linear") == lora_params(mixtral, 16, "attention") \
        == 13_631_488  # was 240,123,904 with the experts as nn.Linear
    kimi = find_preset("kimi-k2").arch
    mlp = 16 * 3 * (7168 + 2048)  # gate, up, down of one 2048-wide expert
    dense = 16 * 3 * (7168 + 18432)  # the first layer's dense MLP
    assert lora_params(kimi, 16, "all_linear") == lora_params(kimi, 16, "attention") + dense \
        + 60 * (384 + 1) * mlp  # 384 routed and one shared expert in 60 MoE layers


def test_adapter_inputs_kept_for_backward_follow_the_adapted_linears() -> None:
    setup = LayerSetup(seq_len=4096, elem_bytes=2, flash=True, profile="hf", adapter_rank=16)
    gpt_oss = [i.name for i in adapter_saved(find_preset("gpt-oss-20b").arch, setup, True)]
    assert gpt_oss == ["LoRA inputs of the attention projections",
                       "LoRA input of the output projection"]
    scout = adapter_saved(find_preset("llama-4-scout").arch, setup, True)
    # one shared expert sees every token: (1 B dropout mask + 2 B input) x in + 2 B x r per linear
    assert scout[-1].bytes_per_token == 3 * (5120 + 5120 + 8192) + 2 * 16 * 3


def test_hybrid_lora_adapts_attention_in_attention_layers_and_deltanet_with_all_linear() -> None:
    arch = find_preset("qwen3-next-80b-a3b").arch
    # 12 gated-attention layers: q_proj is twice q_width (query and output gate)
    assert lora_params(arch, 16, "attention") == 12 * 16 * (
        (2048 + 8192) + 2 * (2048 + 512) + (4096 + 2048)) == 4_128_768  # was 16,515,072
    attention = 4_128_768
    # 36 Gated DeltaNet layers: in_proj_qkvz (q, k: 16 x 128; v, z: 32 x 128), in_proj_ba, out_proj
    deltanet = 36 * 16 * ((2048 + 2 * 2048 + 2 * 4096) + (2048 + 2 * 32) + (4096 + 2048))
    assert arch.moe is not None
    expert = 16 * 3 * (2048 + 512)  # gate, up, down of one expert (routed and shared: 512 wide)
    experts = 1 + (0 if arch.moe.fused_experts else arch.moe.experts)
    assert lora_params(arch, 16, "all_linear") == attention + deltanet + 48 * experts * expert


def test_lora_trains_adapters_only() -> None:
    request = replace(BASE, task="finetune", lora_rank=16)
    est = estimate_of(request)
    assert est.params_trainable == 41_943_040
    # the frozen 16-bit base, and the adapters in fp32 (peft autocast_adapter_dtype)
    assert model_state.weights(resolve(request).job).bytes == 2 * P + 4 * 41_943_040
    assert est.per_gpu_bytes["optimizer"] == 8 * 41_943_040  # fp32 adapters: m and v


def test_qlora_base_is_about_4_bits() -> None:
    request = replace(BASE, task="finetune", lora_rank=16, quantization="nf4")
    weights = model_state.weights(resolve(request).job).bytes
    # NF4 layer linears (4.127 bits) + embeddings, LM head and norms in fp32 (peft
    # prepare_model_for_kbit_training) + fp32 adapters: on an H100, Llama-3.1-8B's QLoRA model
    # measured 8.04 GB after loading, with 66 MiB of cuBLAS workspaces (run t15)
    assert weights / 1e9 == pytest.approx(7.97, abs=0.05)
    assert any("qlora" in a for a in assumption_lines(request))


def test_moe_expert_parallelism_splits_experts() -> None:
    base = EstimateRequest(model="mixtral-8x7b", seq_len=4096, gpu_count=8, zero_stage=1)
    one = estimate_of(base).per_gpu_bytes["weights"]
    ep8 = estimate_of(replace(base, ep=8)).per_gpu_bytes["weights"]
    assert ep8 < one / 3


def test_megatron_profile_reproduces_korthikanti_for_a_gpt() -> None:
    arch = {"layers": 1, "hidden": 1024, "heads": 16, "ffn": 4096, "vocab": 1000,
            "mlp": "plain", "norm": "layernorm", "dropout": 0.1, "positions": "learned",
            "max_positions": 2048}
    req = EstimateRequest(arch=arch, seq_len=2048, flash_attn=False)
    meg = estimate_of(replace(req, activation_model="megatron")).details["activation_per_layer_bytes"]
    kor = 2048 * 1024 * (34 + 5 * 16 * 2048 / 1024)
    assert meg == pytest.approx(kor, rel=0.001)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"tp": 3, "gpu_count": 3}, "tp"),
        ({"tp": 2, "gpu_count": 3}, "gpu_count"),
        ({"pp": 64, "gpu_count": 64}, "pp"),
        ({"ep": 2, "gpu_count": 2}, "ep"),
        ({"precision": "int3"}, "precision"),
        ({"optimizer": "adam9"}, "optimizer"),
        ({"recompute": "sometimes"}, "recompute"),
        ({"seq_len": 0}, "seq_len"),
        ({"micro_batch": -1}, "micro_batch"),
        ({"zero_stage": 4}, "zero_stage"),
        ({"mfu": 1.5}, "mfu"),
    ],
)
def test_bad_requests_name_the_field(changes: dict[str, object], field: str) -> None:
    with pytest.raises(InvalidInput) as err:
        estimate_of(replace(BASE, **changes))  # type: ignore[arg-type]
    assert err.value.field == field


def test_unknown_names_come_with_suggestions() -> None:
    with pytest.raises(UnknownName) as err:
        estimate_of(replace(BASE, model="llama-3-8c"))
    assert "llama-3-8b" in err.value.suggestions
    with pytest.raises(UnknownName) as gpu_err:
        estimate_of(replace(BASE, gpu="a100-41gb"))
    assert any(s.startswith("a100") for s in gpu_err.value.suggestions)


def test_time_and_cost_when_tokens_are_given() -> None:
    compute = compute_answer(EstimateRequest(params_b=7, tokens=1e12, gpu="h100-80gb",
                                             gpu_count=256, mfu=0.4,
                                             price_per_gpu_hour=2.0)).answer.compute
    assert compute is not None
    # 6N plus the attention term at seq 4096: a little over the seed's 4.8 days
    assert 4.8 < compute.days < 5.6
    assert compute.cost_usd == pytest.approx(compute.gpu_hours * 2.0)


def test_learned_positions_cap_the_sequence() -> None:
    gpt2 = estimate_of(EstimateRequest(model="gpt2"))
    assert gpt2.job.micro_batch == 1
    assert any("1,024 tokens" in a for a in assumption_lines(EstimateRequest(model="gpt2")))
    with pytest.raises(InvalidInput) as err:
        estimate_of(EstimateRequest(model="gpt2", seq_len=2048))
    assert err.value.field == "seq_len" and "1,024" in err.value.accepted


def test_gpus_without_bf16_default_to_fp16_mixed() -> None:
    lines = assumption_lines(EstimateRequest(model="llama-3.2-1b", gpu="v100-32gb"))
    assert any("fp16 mixed" in a and "no bf16" in a for a in lines)


def test_parameter_offload_needs_zero_3() -> None:
    with pytest.raises(InvalidInput) as err:
        estimate_of(replace(BASE, offload="optimizer_and_params", zero_stage=2, gpu_count=8))
    assert err.value.field == "offload"
    est = estimate_of(replace(BASE, offload="optimizer_and_params", zero_stage=3, gpu_count=8))
    assert est.per_gpu_bytes["weights"] == 0 and est.per_gpu_bytes["temporary"] > 0


def test_uneven_pipeline_stages_count_the_heaviest_stage() -> None:
    # 32 layers over pp=5: the heaviest stage holds 7 layers, not 6.4
    arch = find_preset("llama-3-8b").arch
    per_layer = (P - 2 * 128256 * 4096) / 32
    est = estimate_of(replace(BASE, pp=5, gpu_count=5, global_batch=10))
    assert est.per_gpu_bytes["weights"] == pytest.approx(2 * (7 * per_layer + 128256 * 4096),
                                                          rel=0.001)
    assert arch.layers == 32


def test_korthikanti_full_recompute_splits_with_sequence_and_context_parallelism() -> None:
    req = replace(BASE, activation_model="korthikanti", recompute="full", seq_len=8192)
    one = estimate_of(req).per_gpu_bytes["activations"]
    assert estimate_of(replace(req, tp=2, gpu_count=2, sequence_parallel=True)) \
        .per_gpu_bytes["activations"] == pytest.approx(one / 2)
    assert estimate_of(replace(req, cp=2, gpu_count=2)).per_gpu_bytes["activations"] == \
        pytest.approx(one / 2)


STATE_VARIANTS = {  # a different value of every field the step states do not read
    "seq_len": 8192, "micro_batch": 4, "global_batch": 1024, "recompute": "full",
    "flash_attn": False, "chunked_loss": True, "activation_model": "megatron", "batch": 8,
    "kv_cache_dtype": "fp8", "gpu": find_gpu("a100-40gb"), "overhead_model": "none",
    "cuda_context_bytes": 10**9, "allocator_reserve": 0.2,
}


@pytest.mark.parametrize("fields", [
    {"model": "llama-3-8b"},
    {"model": "llama-3.1-70b", "tp": 4, "pp": 2, "gpu_count": 64, "zero_stage": 1},
    {"model": "mixtral-8x7b", "zero_stage": 3, "gpu_count": 16, "ep": 2},
    {"model": "qwen2.5-14b", "task": "finetune", "lora_rank": 64},
    {"model": "mistral-7b-v0.3", "task": "finetune", "quantization": "nf4"},
    {"model": "gemma-2-9b", "optimizer": "adamw_torch", "offload": "optimizer",
     "zero_stage": 2, "gpu_count": 8},
])
def test_step_states_are_shared_only_by_jobs_they_do_not_tell_apart(
        fields: dict[str, object]) -> None:
    """Jobs that differ only in what no step state reads share one (``shared_step_states``);
    any such field that a step state did read would show here."""
    assert set(STATE_VARIANTS) == NOT_READ_BY_STEP_STATES
    job = resolve(EstimateRequest(**fields)).job  # type: ignore[arg-type]
    fresh = step_states(job)
    for name, value in STATE_VARIANTS.items():
        assert step_states(replace(job, **{name: value})) == fresh, name
    assert shared_step_states(replace(job, seq_len=1234)) == fresh
    assert shared_step_states(job) is shared_step_states(replace(job, micro_batch=2))
    assert shared_step_states(replace(job, optimizer="sgd")) != fresh  # a field they read


def test_context_parallel_ranks_share_the_sharded_model_states() -> None:
    """Megatron's distributed optimizer and torchtitan's FSDP shard over dp x cp: two replicas of
    four context-parallel ranks keep the same optimizer share as eight data-parallel ranks."""
    with_cp = per_gpu(gpu_count=8, cp=4, zero_stage=1, seq_len=32768)["optimizer"]
    without = per_gpu(gpu_count=8, zero_stage=1, seq_len=32768)["optimizer"]
    assert with_cp == without


def test_qlora_with_parameter_offload_keeps_only_the_adapters_on_the_gpu() -> None:
    """FSDP-QLoRA with CPU offload (Answer.AI's 70B on two 24 GB cards): the 4-bit base lives
    in CPU memory, the GPU keeps the fp32 adapters and the gathered layer."""
    est = estimate_of(EstimateRequest(model="llama-2-70b", task="finetune",
                                      finetune_method="qlora", quantization="nf4", seq_len=512,
                                      gpu="rtx3090-24gb", gpu_count=2, zero_stage=3,
                                      offload="optimizer_and_params"))
    stored = next(c for c in est.components if c.key == "weights" and "CPUOffload" in c.source)
    assert stored.bytes == est.params_trainable * 4
    assert est.total_bytes < 24e9


def test_a_pipeline_without_a_global_batch_runs_four_micro_batches_per_stage() -> None:
    """TP=8 PP=4 on 64 GPUs with no global batch: 2 x 4 x 4 = 32 sequences a step, so the first
    stage holds pp micro-batches in flight (one micro-batch would leave the pipeline idle)."""
    resolved = resolve(EstimateRequest(model="llama-3.1-70b", gpu_count=64, tp=8, pp=4))
    assert resolved.job.global_batch == 32 and resolved.job.grad_accum == 16
    assert any(a.field == "global_batch" and a.origin == "derived" for a in resolved.assumptions)


def test_fsdp2_shard_grad_op_keeps_fp32_shards_and_the_unsharded_16_bit_parameters() -> None:
    """FSDP2 ZeRO-2 (reshard_after_forward=False): 8.03B x (4 / 8 + 2) bytes, not fp32 whole."""
    weights = next(c for c in estimate_of(replace(BASE, framework="fsdp", zero_stage=2,
                                                  gpu_count=8)).components
                   if c.key == "weights" and "FSDP2" in c.source)
    assert weights.bytes == round(P * (4 / 8 + 2))


def test_deepspeed_zero_1_and_2_reduce_through_two_bucket_buffers() -> None:
    """DeepSpeed's stage_1_and_2.py allocates two reduce_bucket_size buffers in backward()
    (contiguous_gradients, overlap_comm: what fitcheck's DeepSpeed config sets), 2 GB in bf16;
    DDP keeps two 25 MiB buckets."""
    job = resolve(EstimateRequest(model="mistral-7b-v0.3", task="finetune", zero_stage=1,
                                  offload="optimizer", framework="deepspeed", gpu="rtx4090-24gb",
                                  gpu_count=2)).job
    assert gradient_buckets(job).bytes == 2 * 500_000_000 * 2
    ddp = resolve(EstimateRequest(model="mistral-7b-v0.3", zero_stage=0, framework="hf",
                                  gpu="h100-80gb", gpu_count=2)).job
    assert gradient_buckets(ddp).bytes == 2 * 25 * 2**20


def test_fsdp_qlora_gathers_what_bitsandbytes_left_16_bit_at_16_bits() -> None:
    """FSDP-QLoRA all-gathers each layer as stored: NF4 linears at ~0.52 B/param, but Llama 4
    Maverick's fused routed experts (not nn.Linear, so not quantized) at 2 B/param, which is
    nearly all of its layer: the QLoRA gather is then about LoRA's, not a quarter of it."""
    def gather(model: str, method: str) -> int:
        job = resolve(EstimateRequest(model=model, task="finetune", finetune_method=method,
                                      gpu="h100-80gb", gpu_count=16, zero_stage=3)).job
        return gathered_layers(job).bytes

    assert 0.9 < gather("llama-4-maverick", "qlora") / gather("llama-4-maverick", "lora") <= 1
    assert gather("llama-3.1-70b", "qlora") / gather("llama-3.1-70b", "lora") < 0.3
