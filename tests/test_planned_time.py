"""Training time and cost as the planner answers them: the verdict's layout, its recompute, the
frozen base of adapters, and the seed's 6ND beside the full count."""

from __future__ import annotations

from dataclasses import replace

import pytest
from engine_support import DONE_MEANS, plan_of

from service.answers import compute_answer
from service.core.hardware.gpus import find_gpu
from service.core.job.request import EstimateRequest


# S5: compute, time and cost through the planner.
def test_s5_time_and_cost_through_the_planner() -> None:
    request = EstimateRequest(params_b=7, tokens=1e12, gpu="h100-80gb", gpu_count=256, mfu=0.4)
    plan = plan_of(request)
    assert plan.fits and plan.gpus == 256
    assert plan.compute is not None
    seed = plan.compute.textbook
    assert seed.total_flops == pytest.approx(4.2e22)
    assert seed.seconds == pytest.approx(4.15e5, rel=0.002)
    assert seed.days == pytest.approx(4.8, abs=0.05)
    assert seed.gpu_hours == pytest.approx(29_500, rel=0.002)
    assert seed.cost == pytest.approx(seed.gpu_hours * find_gpu("h100-80gb").price_per_gpu_hour_usd)
    full = plan.compute.full
    assert full.total_flops > seed.total_flops  # + the attention term
    assert full.compute_optimal_tokens == pytest.approx(20 * 7e9)


def test_recompute_slows_the_planned_time() -> None:
    request = replace(DONE_MEANS, tokens=1e10, price_per_gpu_hour=1.0)
    plan = plan_of(request)
    assert plan.compute is not None
    full, textbook = plan.compute.full, plan.compute.textbook
    assert plan.layout is not None and plan.layout.recompute == "full"
    # MFU counts model FLOPs: the forward run again (8N + 16 attention instead of 6N + 12, a
    # quarter more) lowers the MFU the run reaches, not the FLOPs the model needs
    assert full.total_flops / full.flops_per_token == pytest.approx(1e10)
    mfu = next(a.value for a in plan.assumptions if a.field == "mfu")
    assert mfu == pytest.approx(find_gpu("a100-40gb").default_mfu * 0.75, abs=0.001)
    peak = find_gpu("a100-40gb").bf16_dense_tflops * 1e12
    assert full.seconds == pytest.approx(full.total_flops / (plan.gpus * peak * mfu), rel=1e-9)
    assert full.seconds / textbook.seconds == pytest.approx(full.flops_per_token / 6 / 7e9)
    assert full.cost == pytest.approx(full.gpu_hours)


def test_adapters_cost_two_thirds_of_full_training_the_frozen_base_has_no_weight_gradients(
        ) -> None:
    lora = EstimateRequest(model="llama-3-8b", task="finetune", finetune_method="lora",
                           seq_len=2048, tokens=1e9, gpu="h100-80gb", gpu_count=1)
    full = replace(lora, finetune_method="full", gpu_count=8)
    lora_time, full_time = plan_of(lora).compute, plan_of(full).compute
    assert lora_time is not None and full_time is not None
    attention = full_time.full.flops_per_token - 6 * 8.03e9
    adapters = 41_943_040  # rank 16 on every linear of Llama 3 8B
    assert lora_time.full.flops_per_token == pytest.approx(
        4 * 8.03e9 + 2 * adapters + attention, rel=1e-3)
    assert 0.66 < lora_time.full.flops_per_token / full_time.full.flops_per_token < 0.70
    assert lora_time.textbook.flops_per_token == pytest.approx(6 * 8.03e9, rel=1e-3)


def test_time_is_the_verdicts_layout_with_its_recompute() -> None:
    """8B full fine-tune with ZeRO-3 on 8 A100 40GB over 1B tokens: only full recompute fits, and
    the planner's layout is the verdict, so the time includes the recomputed forward (it was
    timed for the stated job, 15 h instead of 20)."""
    base = dict(model="llama-3.1-8b", task="finetune", finetune_method="full", zero_stage=3,
                tokens=1e9, gpu="a100-40gb", gpu_count=8)
    unstated = compute_answer(EstimateRequest(**base)).answer  # type: ignore[arg-type]
    stated = compute_answer(EstimateRequest(**base, recompute="full")).answer  # type: ignore[arg-type]
    assert unstated.compute is not None and stated.compute is not None
    assert unstated.compute.days == pytest.approx(stated.compute.days, rel=1e-6)


def test_a_narrow_model_gets_the_micro_batch_its_gemms_need() -> None:
    """GPT-2-small-sized pretraining at 1,024 tokens, 512 a step (reviews 13 and 14): one sequence per
    micro-batch leaves a 768-wide model's GEMMs starved; the plan fills about the tokens x width
    of 2,048 tokens at 4,096 (nanoGPT runs 12 x 1,024 for this model). An 8B model at 4k keeps
    micro-batch 1."""
    small = plan_of(EstimateRequest(params_b=0.125, seq_len=1024, global_batch=512,
                                    gpu="a100-80gb", gpu_count=8))
    assert small.fits and small.layout is not None and small.layout.micro_batch >= 8
    wide = plan_of(EstimateRequest(model="llama-3-8b", seq_len=4096, zero_stage=3,
                                   gpu="a100-40gb", gpu_count=8))
    assert wide.layout is not None and wide.layout.micro_batch == 1


def test_a_stated_mfu_of_an_fp8_run_is_read_against_the_bf16_peak() -> None:
    """'45% MFU' is measured against the bf16 dense peak (Megatron-LM, torchtitan, NeMo); FP8
    GEMMs make the run ~1.4x faster, not the FP8 peak's 2x."""
    ask = EstimateRequest(model="llama-3.1-70b", seq_len=8192, global_batch=1024, tp=8, pp=4,
                          framework="megatron", tokens=2e12, mfu=0.45, gpu="h100-80gb",
                          gpu_count=256)
    bf16, fp8 = plan_of(ask).compute, plan_of(replace(ask, precision="fp8")).compute
    assert bf16 is not None and fp8 is not None
    speedup = bf16.full.seconds / fp8.full.seconds
    assert 1.3 <= speedup <= 1.5
    said = {a.field: a for a in plan_of(replace(ask, precision="fp8")).compute.assumptions}
    assert said["mfu"].value == 0.45 and said["mfu"].origin == "stated"
    assert "bf16 peak" in said["plan.fp8_mfu"].why


def test_with_no_gpu_count_the_gpu_hours_lead_not_the_days_on_the_fewest_gpus() -> None:
    """'Cost to train an 8B on 15T tokens on H100s' had led with 11,981 days on the 2 GPUs that
    hold it (held-out set 22, review 21): the GPU-hours and the cost lead, with the GPUs that
    finish in a month."""
    from ask_support import ask

    reply = ask("rough cost to train a llama3 8b-style model on 15T tokens, H100 at $2.50/hr").reply
    head = reply.splitlines()[0]
    assert head.startswith(
        "*575,096 GPU-hours (460,077-766,795 at the default MFU ±25%)* · *≈$1,437,741*")
    assert "no GPU count given: 11,981.2 days on the 2 GPUs that hold it, 30 days on about 799" \
        in head
    stated = ask("days to pretrain a 7B on 1T tokens with 64 H100s").reply.splitlines()[0]
    assert stated.startswith("*22.1 days (17.7-29.5 days at the default MFU ±25%)*")
    assert "on 64 GPUs" in stated
    assert ask("days to pretrain a 7B on 1T tokens with 64 H100s at 45% mfu").reply.startswith(
        "*19.7 days*")  # a stated MFU: one figure


def test_a_time_question_on_gpus_it_does_not_fit_yet_still_gets_a_time() -> None:
    answer = compute_answer(EstimateRequest(model="llama-3-8b", task="finetune", tokens=1e8,
                                            gpu="a100-80gb", gpu_count=1)).answer
    assert answer.fits is False and answer.compute is not None
    assert 15 < answer.compute.seconds / 3600 < 18  # 5.5e18 FLOPs at 30% of 312 TFLOP/s


def test_a_layout_that_fits_but_crawls_says_so() -> None:
    """Review 22: DeepSeek-V3's fewest H100s fit with ZeRO-3 gathering the experts for every
    micro-batch, a step the model rates far from the ideal; the reply had said nothing."""
    from ask_support import ask

    reply = ask("how many H100s do I need to pretrain DeepSeek-V3 at seq 4096?").reply
    slow = next(line for line in reply.splitlines() if line.startswith("Slow: step time x"))
    assert "ZeRO-3 communication" in slow and "It fits the memory, but a run would crawl" in slow
    assert not any(line.startswith("Slow:") for line in
                   ask("days to pretrain a 7B on 1T tokens with 64 H100s").reply.splitlines())


def test_a_gpu_the_parser_chose_is_not_said_back_as_the_users() -> None:
    """Set 24: 'You said: GPU h100-80gb' beside 'no GPU type named'."""
    from ask_support import ask

    result = ask("gpu-hours for 405B on 15.6T tokens?")
    said = next(line for line in result.reply.splitlines() if line.startswith("_You said:_"))
    assert "GPU" not in said and "no GPU type named: H100 80GB SXM" in result.reply


def test_a_near_tie_goes_to_the_layout_whose_band_stays_inside_the_card() -> None:
    """Review 22: 8B at 8k on 256 H100s had picked a layout at 73.9 GB (band up to 88.7 GB,
    over the 84.9 usable) over ZeRO-1 + TP=2 at 57 GB, 2% slower."""
    answer = compute_answer(EstimateRequest(model="llama-3-8b", seq_len=8192, global_batch=512,
                                            tokens=15e12, gpu="h100-80gb",
                                            gpu_count=256)).answer
    assert answer.error_band.verdict == "fits"
    assert answer.planner is not None and answer.planner.layout is not None
    assert answer.planner.layout.plan.tp == 2 and answer.planner.layout.plan.zero_stage == 1


def test_qlora_runs_slower_per_flop_than_lora_not_faster() -> None:
    """Held-out set 27: QLoRA was timed at the bf16 MFU, so with no recompute it came out 1.45x
    faster than LoRA; the measured H100 runs put its model TFLOP/s at 0.78 of LoRA's."""
    from service.core.compute.time_cost import QLORA_THROUGHPUT, default_mfu
    from service.core.hardware.gpus import find_gpu
    from service.core.job.request import EstimateRequest
    from service.core.job.resolve import resolve

    def mfu(method: str) -> tuple[float, str]:
        job = resolve(EstimateRequest(model="llama-3.1-8b", task="finetune", finetune_method=method,
                                      recompute="full", gpu="h100-80gb", gpu_count=1)).job
        value, said = default_mfu(find_gpu("h100-80gb"), "bf16", job, 8e9, 4e7)
        return value, said.why

    lora, _ = mfu("lora")
    qlora, why = mfu("qlora")
    assert qlora == pytest.approx(lora * QLORA_THROUGHPUT, abs=0.002)
    assert "dequantized in every matmul" in why
