"""The planner: fewest GPUs and a valid layout, the seeds through the planner, shortfalls and fixes."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from engine_support import DONE_MEANS, plan_assumption_lines, plan_of, verdict_of
from test_seeds import S3_ARCH

from service.answers import compute_answer
from service.cli import main
from service.core.errors import InvalidInput
from service.core.hardware.gpus import all_gpus, find_gpu
from service.core.job.request import EstimateRequest
from service.core.job.resolve import resolve
from service.core.planning.layouts import nvlink_tp_domain, violations
from service.core.planning.plan_types import Layout, Plan
from service.core.planning.search_setup import build_space
from service.core.planning.step_time import step_terms
from service.render.cli_text import answer_text

GB = 1e9


def assert_valid(plan: Plan, request: EstimateRequest) -> None:
    """Every rule of a physically valid layout (layouts.violations) and the memory budget."""
    assert plan.fits and plan.layout is not None and plan.estimate is not None
    gpu = find_gpu(plan.gpu_id)
    arch = resolve(request).job.arch
    per_node = request.gpus_per_node or gpu.gpus_per_node
    lay = plan.layout
    problems = violations(lay, arch, nvlink_tp_domain(gpu, per_node), per_node,
                          request.seq_len or 4096, request.global_batch or 0)
    assert problems == []
    assert lay.dp * lay.tp * lay.pp * lay.cp == lay.gpus == plan.gpus
    assert plan.estimate.total_bytes <= plan.budget_bytes <= gpu.memory_bytes_usable


def test_done_means_7b_seq_4096_zero3_on_a100_40gb() -> None:
    plan = plan_of(DONE_MEANS)
    assert_valid(plan, DONE_MEANS)
    assert plan.gpus == plan.min_gpus == 4
    lay = plan.layout
    assert lay is not None
    assert (lay.dp, lay.zero_stage, lay.recompute, lay.micro_batch) == (4, 3, "full", 1)
    assert verdict_of(plan).startswith("Fits on 4x NVIDIA A100 40GB")
    assert "ZeRO-3 + full recompute" in verdict_of(plan)
    # why: recompute is needed, fewer GPUs cannot hold the states, and the layout is the fastest
    assert any("full recompute is needed" in w for w in plan.why)
    # a stated ZeRO-3 without TP/PP is DeepSpeed's data parallelism: one layout on 4 GPUs
    assert plan.stack == "deepspeed"
    assert any("only layout that fits" in w or "fastest of" in w for w in plan.why)
    assert all("slower" in a.reason or "does not fit" in a.reason for a in plan.alternatives)


def test_the_plan_breakdown_is_the_engines_estimate_of_that_layout() -> None:
    plan = plan_of(DONE_MEANS)
    from engine_support import estimate_of

    same = estimate_of(replace(DONE_MEANS, gpu_count=4, recompute="full"))
    assert plan.estimate is not None
    assert plan.estimate.per_gpu_bytes == same.per_gpu_bytes


def test_cli_plan_prints_the_verdict_first(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["plan", "--model", "7B", "--seq-len", "4096", "--zero-stage", "3", "--gpu",
            "a100-40gb"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith("Fits on 4x NVIDIA A100 40GB SXM with ZeRO-3 + full recompute")
    for part in ("Layout: dp=4 tp=1 pp=1 cp=1", "Why:", "DeepSpeed", "Fits on (fewest",
                 "NVIDIA H100 80GB SXM", "Assumptions:"):
        assert part in out
    assert main([*argv, "--json", "--no-fits-on"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["min_gpus"] == 4 and body["fits"] is True
    assert {"dp", "tp", "pp", "cp", "zero_stage", "recompute", "micro_batch"} <= set(body["plan"])
    assert body["per_gpu_bytes"]["total"] <= body["planner"]["budget_bytes"]
    assert body["fits_on"] == []


def test_estimate_without_a_count_also_answers_the_fewest_gpus(
        capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["estimate", "--model", "7B", "--seq-len", "4096", "--zero-stage", "3", "--gpu",
            "a100-40gb"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "Planner (fewest GPUs of this type):" in out and "Fits on 4x" in out
    assert main([*argv, "--json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["min_gpus"] == 4
    assert body["planner"]["layout"]["plan"]["zero_stage"] == 3
    given = compute_answer(replace(DONE_MEANS, gpu_count=8)).answer
    assert given.plan.gpus == 8
    assert given.planner is not None and given.planner.mode == "given" and given.planner.gpus == 8


# S3: the seed's naive counts on request; the real plan valid and explained.
S3 = EstimateRequest(arch=S3_ARCH.to_dict(), params_b=7, seq_len=4096, global_batch=128,
                     precision="fp16_mixed", gpu="a100-40gb")


def test_s3_seed_counts_reproduced_on_request_and_explained() -> None:
    plan = plan_of(replace(S3, method="seed_even_split"))
    counts = [c.gpus for c in plan.seed_counts]
    assert counts == [924, 427, 278, 15, 8]
    by_count = {c.gpus: c for c in plan.seed_counts}
    assert any("whole sequences" in r for r in by_count[924].reasons)
    assert any("one sequence alone keeps 85.9 GB" in r for r in by_count[924].reasons)
    assert any("do not split evenly over 15" in r for r in by_count[15].reasons)
    assert any("not whole 8-GPU nodes" in r for r in by_count[15].reasons)
    eight = " ".join(by_count[8].reasons)
    assert "16 sequences per GPU at once" in eight and "CUDA context" in eight
    assert all(c.reasons for c in plan.seed_counts)  # none of them runs as the seed says


def test_s3_real_plan_is_physically_valid() -> None:
    for request in (S3, replace(S3, method="seed_even_split")):
        plan = plan_of(request)
        assert_valid(plan, request)
        lay = plan.layout
        assert lay is not None
        assert lay.dp * lay.micro_batch * lay.grad_accum == 128
        assert lay.dp <= 128 // lay.micro_batch
    text = answer_text(compute_answer(replace(S3, method="seed_even_split")).answer)
    assert "924" in text and "cannot run as stated" in text
    assert text.index("The S3 seed's") < text.index("Layout:")


def test_s3_counts_only_for_the_stated_configuration() -> None:
    plan = plan_of(replace(S3, method="seed_even_split", zero_stage=3, recompute="full",
                             flash_attn=True))
    assert [c.gpus for c in plan.seed_counts] == [8]


def test_unknown_method_is_rejected() -> None:

    with pytest.raises(InvalidInput) as err:
        plan_of(replace(S3, method="guess"))
    assert err.value.field == "method"


# Given GPUs: fits or not, by how much, and the cheapest fix.
def test_given_gpus_that_fit_get_the_best_layout() -> None:
    request = replace(DONE_MEANS, gpu_count=8)
    plan = plan_of(request)
    assert plan.mode == "given" and plan.fits and plan.gpus == 8
    assert plan.min_gpus == 4
    assert plan.fix is None


def test_given_gpus_short_says_by_how_much_and_the_cheapest_fix() -> None:
    request = EstimateRequest(model="llama-3.1-70b", seq_len=8192, global_batch=512,
                              gpu="h100-80gb", gpu_count=8)
    plan = plan_of(request)
    assert not plan.fits and plan.gpus == 8
    assert plan.shortfall_bytes is not None and plan.shortfall_bytes > 0
    assert verdict_of(plan).startswith("Does not fit on 8x NVIDIA H100 80GB SXM")
    fixes = [plan.fix, *plan.other_fixes]
    assert plan.fix is not None and len(fixes) == 3
    # knobs on the same GPUs first (each with its cost), then more of the same GPU
    assert [f.kind for f in fixes if f is not None] == ["knob", "knob", "more_gpus"]
    assert "CPU offload of optimizer" in plan.fix.change and "step time x" in plan.fix.note
    assert "CPU memory per GPU" in plan.fix.note
    assert "16x NVIDIA H100 80GB SXM instead of 8" in fixes[-1].change  # type: ignore[union-attr]
    assert plan.min_gpus == 16


def test_a_pinned_knob_is_the_cheapest_fix() -> None:
    request = replace(DONE_MEANS, gpu_count=4, recompute="none", tp=1, cp=1)
    plan = plan_of(request)
    assert not plan.fits
    assert plan.fix is not None and plan.fix.change.startswith("activation recompute")
    assert plan.fix.changes == {"recompute": "full"}
    assert plan.fix.gpus == 4 and plan.fix.total_bytes is not None
    assert plan.fix.total_bytes <= plan.budget_bytes


def test_headroom_is_stated_and_overridable() -> None:
    tight = plan_of(replace(DONE_MEANS, memory_headroom=0.75))
    loose = plan_of(DONE_MEANS)
    assert tight.budget_bytes < loose.budget_bytes
    assert tight.gpus is not None and loose.gpus is not None and tight.gpus >= loose.gpus
    assert any("plan to 95% of usable memory" in a for a in plan_assumption_lines(loose))


# The fits-on table.
def test_fits_on_covers_the_catalog() -> None:
    request = EstimateRequest(model="llama-3.1-70b", seq_len=8192, global_batch=512,
                              gpu="h100-80gb")
    plan = plan_of(request, fits_on=True)
    rows = {r.gpu_id: r for r in plan.fits_on}
    assert set(rows) == {g.id for g in all_gpus()}
    assert rows["h100-80gb"].gpus == plan.gpus == 16
    assert rows["b200-180gb"].gpus is not None and rows["b200-180gb"].gpus < 16
    for row in plan.fits_on:
        if row.gpus is not None:
            assert row.total_bytes is not None and row.total_bytes <= row.budget_bytes
            per_node = find_gpu(row.gpu_id).gpus_per_node
            assert row.gpus <= per_node or row.gpus % per_node == 0


def test_without_a_gpu_the_plan_is_the_fits_on_table() -> None:
    plan = plan_of(EstimateRequest(model="llama-3-8b", seq_len=4096, global_batch=64))
    assert plan.mode == "catalog" and len(plan.fits_on) == len(all_gpus())
    assert verdict_of(plan).startswith("No GPU given. Cheapest per hour:")


# Bigger models: the layouts an infrastructure engineer would expect.
@pytest.mark.parametrize(
    ("model", "seq", "batch", "gpus"),
    [("llama-3.1-70b", 8192, 512, 16), ("llama-3.1-405b", 8192, 2048, 112),
     ("mixtral-8x22b", 4096, 512, 40)],
)
def test_large_models_on_h100(model: str, seq: int, batch: int, gpus: int) -> None:
    # 405B: TP=8 x PP=14 under Megatron-LM, whose bf16 training keeps fp32 gradient buffers;
    # Mixtral 8x22B too (torchtitan does not ship it, and accelerate's TP has no sequence
    # parallelism): 18 B per parameter over TP=2 x PP=20
    request = EstimateRequest(model=model, seq_len=seq, global_batch=batch, gpu="h100-80gb")
    plan = plan_of(request)
    assert_valid(plan, request)
    assert plan.gpus == gpus
    assert plan.layout is not None and plan.layout.tp <= 8


# Serving.
SERVE_70B = EstimateRequest(model="llama-3.1-70b", task="infer", seq_len=16384, concurrent=50,
                            gpu="h100-80gb")


def test_serving_fewest_gpus_for_weights_and_kv() -> None:
    plan = plan_of(SERVE_70B)
    s = plan.serving
    # engines people deploy: 2 replicas of TP=4 on one node, not TP=2 x PP=3 on 6 GPUs
    assert plan.fits and plan.gpus == 8 and s is not None
    assert (s.replicas, s.tp, s.pp) == (2, 4, 1)
    assert s.max_concurrent >= 50
    assert any("fewer GPUs do not fit: on 4 (TP=4)" in w for w in plan.why)
    # the vLLM budget: fraction x capacity - weights - the fixed part (activation peak,
    # non-torch memory, CUDA graphs)
    cap = find_gpu("h100-80gb").memory_bytes_usable
    assert s.fixed_bytes > s.workspace_bytes
    budget = round(cap * 0.9) - s.weights_bytes - s.fixed_bytes
    assert s.kv_budget_bytes == budget
    assert s.max_concurrent == s.replicas * (budget // s.kv_per_sequence_bytes)
    assert verdict_of(plan).startswith("Serves llama-3.1-70b at 16,384 tokens x 50 sequences on 8x")


def test_serving_concurrency_on_given_gpus() -> None:
    four = plan_of(replace(SERVE_70B, gpu_count=4))
    assert four.mode == "given" and not four.fits and four.min_gpus == 8
    assert four.serving is not None and 0 < four.serving.max_concurrent < 50
    assert "Does not serve" in verdict_of(four)
    sixteen = plan_of(replace(SERVE_70B, gpu_count=16))
    assert sixteen.serving is not None
    # replicas inside the nodes (the smallest engine that holds the model and its share),
    # rather than one engine of TP=8 x PP=2 across both nodes
    assert (sixteen.serving.replicas, sixteen.serving.tp, sixteen.serving.pp) == (4, 4, 1)
    assert sixteen.serving.max_concurrent > 2 * four.serving.max_concurrent


def test_serving_fits_on_quantized() -> None:
    request = replace(SERVE_70B, quantization="awq", concurrent=8, seq_len=8192,
                      gpu="rtx4090-24gb")
    plan = plan_of(request, fits_on=True)
    assert plan.fits and plan.gpus is not None and plan.gpus <= 4
    assert {r.gpu_id for r in plan.fits_on} == {g.id for g in all_gpus()}


def test_cached_totals_are_the_engines_totals() -> None:
    """The search caches parts of the estimate by what they depend on; every cached total must
    equal the engine's own estimate of that layout (pipelines with m < pp and m >= pp too)."""
    from service.core.planning.layouts import knob_layouts, structures
    from service.core.planning.search_setup import make_searcher

    request = EstimateRequest(model="llama-3-8b", seq_len=4096, global_batch=4,
                              gpu="a100-40gb")
    resolved = resolve(request)
    searcher = make_searcher(resolved, find_gpu("a100-40gb"))
    layouts = [lay for gpus in (4, 8, 16) for s in structures(gpus, searcher.space)
               for lay in knob_layouts(searcher.space, s)]
    assert any(lay.pp > lay.grad_accum for lay in layouts)
    assert any(1 < lay.pp <= lay.grad_accum for lay in layouts)
    totals = [searcher.memory.total(lay) for lay in layouts]
    for lay, total in zip(layouts, totals, strict=True):
        assert total == searcher.memory.estimate(lay).total_bytes, lay


# ---- rack-scale NVLink: GB200 NVL72 ----------------------------------------------------------


def test_gb200_training_tp_spans_trays_inside_the_nvl72_domain_up_to_the_heads_rule() -> None:
    request = EstimateRequest(model="llama-3.1-405b", seq_len=8192, global_batch=512,
                              gpu="gb200-186gb")
    resolved = resolve(request)
    space = build_space(resolved, find_gpu("gb200"))
    assert space.nvlink_domain == 72 and space.gpus_per_node == 4
    assert space.tps == (1, 2, 4, 8)  # 8 KV heads: no TP past 8, however large the domain
    plan = plan_of(request)
    assert_valid(plan, request)
    assert plan.layout is not None and (plan.gpus, plan.layout.tp, plan.layout.pp) == (48, 8, 6)


def test_gb200_serving_puts_tp_8_across_two_trays() -> None:
    plan = plan_of(EstimateRequest(model="llama-3.1-405b", task="infer", seq_len=8192,
                                   concurrent=16, gpu="gb200-186gb"))
    assert plan.serving is not None and plan.gpus_per_node == 4
    assert (plan.gpus, plan.serving.tp, plan.serving.pp) == (8, 8, 1)  # was TP 4 x PP 2


def test_a_node_sized_domain_still_ends_at_a_stated_smaller_node() -> None:
    h100, gb200 = find_gpu("h100-80gb"), find_gpu("gb200")
    assert nvlink_tp_domain(h100, 8) == 8 and nvlink_tp_domain(h100, 4) == 4
    assert nvlink_tp_domain(find_gpu("rtx4090-24gb"), 8) == 1
    assert nvlink_tp_domain(gb200, 4) == 72
    plan = plan_of(EstimateRequest(model="llama-3.1-405b", task="infer", seq_len=8192,
                                   concurrent=16, gpu="h100-80gb", gpus_per_node=4))
    assert plan.serving is not None and plan.serving.tp <= 4


def test_context_parallel_ranks_shard_and_reduce_like_data_parallel_ones() -> None:
    """ZeRO shards over dp x cp (Megatron's distributed optimizer, torchtitan's FSDP mesh), and
    the context-parallel ranks reduce their gradients: a layout with dp=1 and CP=2 says its
    ZeRO stage and pays the data-parallel communication term."""
    layout = Layout(gpus=2, nodes=1, dp=1, tp=1, pp=1, cp=2, ep=1, zero_stage=3,
                    sequence_parallel=False, recompute="none", micro_batch=1, grad_accum=1,
                    global_batch=1, offload="none")
    assert layout.describe().startswith("ZeRO-3 + CP=2")
    names = [name for name, _ in step_terms(layout, 8192, 8, 32)]
    assert any(name.startswith("data-parallel") for name in names)
    alone = replace(layout, cp=1, gpus=1, zero_stage=0)
    assert not any(n.startswith("data-parallel") for n, _ in step_terms(alone, 8192, 8, 32))
    assert alone.describe().startswith("one GPU")


def test_sliding_window_models_get_no_context_parallelism_unless_asked() -> None:
    """accelerate/transformers context parallelism takes causal masks only: Gemma 3's
    sliding-window layers would fail or attend the whole context, so the planner leaves CP out
    (a stated cp stands)."""
    answer = compute_answer(EstimateRequest(model="gemma-3-27b", task="finetune",
                                            finetune_method="full", seq_len=8192,
                                            gpu="h100-80gb", gpu_count=8)).answer
    assert answer.planner is not None and answer.planner.layout is not None
    assert answer.planner.layout.plan.cp == 1


def test_lora_on_one_consumer_card_is_fixed_by_qlora_with_a_chunked_loss_on_that_card() -> None:
    """Qwen3-14B LoRA on one RTX 4090: QLoRA alone leaves the fp32 logits (~5 GB at 4k x 152k
    vocabulary) over the 24 GB budget; QLoRA with a fused linear cross-entropy fits on the one
    card, which an engineer says before '4x slower CPU offload' or 'buy another card'."""
    plan = plan_of(EstimateRequest(model="qwen3-14b", task="finetune", finetune_method="lora",
                                   gpu="rtx4090-24gb", gpu_count=1))
    assert not plan.fits and plan.fix is not None
    assert plan.fix.changes.get("finetune_method") == "qlora"
    assert plan.fix.changes.get("chunked_loss") is True
    assert plan.fix.gpus == 1


def test_a_deep_pipeline_pays_for_the_last_stages_lm_head() -> None:
    """405B on 1,024 H100s: with 2 of 126 layers per stage the last stage's 2.1B-weight LM head
    would slow every step by a third, so the plan keeps stages deep and replicas several."""
    plan = plan_of(EstimateRequest(model="llama-3.1-405b", seq_len=8192, global_batch=2048,
                                   framework="megatron", gpu="h100-80gb", gpu_count=1024))
    assert plan.fits and plan.layout is not None
    assert plan.layout.dp > 1 and plan.layout.pp <= 16
