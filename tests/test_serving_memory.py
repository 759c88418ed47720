"""Serving: quantized weights with their real bits, KV cache by attention kind, concurrency."""

from __future__ import annotations

from dataclasses import replace

import pytest
from engine_support import estimate_of, plan_of

from service.answer_json import answer_dict
from service.answers import compute_answer
from service.core.errors import InvalidInput
from service.core.job.request import EstimateRequest
from service.core.job.resolve import resolve
from service.core.memory.serving import (
    ServingBudget,
    attention_kv_bytes_per_token,
    kv_bytes_per_token,
    kv_cache_bytes,
    serving_weight_bytes,
)
from service.core.memory.serving_split import ServingShare, busiest_share, serving_share
from service.core.model.linears import expert_weight_params
from service.core.model.params import parameter_count
from service.core.model.presets import find_preset
from service.core.model.tensor_parallel import serving_tp_ok

GB = 1e9


def test_gguf_q4_k_m_matches_llama_cpp_file_size() -> None:
    # llama.cpp lists Llama-2-7B Q4_K_M at 4.08 GB (3.80 GiB)
    arch = find_preset("llama-2-7b").arch
    assert serving_weight_bytes(arch, "gguf-q4_k_m") / GB == pytest.approx(4.08, abs=0.05)


def test_awq_70b_keeps_embeddings_in_16_bit() -> None:
    arch = find_preset("llama-3.1-70b").arch
    vocab_matrices = 2 * 128256 * 8192  # embedding and LM head stay 16-bit
    layers = parameter_count(arch) - vocab_matrices
    expected = layers * 4.156 / 8 + vocab_matrices * 2
    assert serving_weight_bytes(arch, "awq") == pytest.approx(expected, rel=0.001)
    assert 39 < expected / GB < 40.5


def test_kv_per_token_by_attention_kind() -> None:
    mha = find_preset("llama-2-7b").arch
    gqa = find_preset("llama-3-8b").arch
    mla = find_preset("deepseek-v3").arch
    assert kv_bytes_per_token(mha, "bf16", 1) == 2 * 32 * 32 * 128 * 2  # 512 KiB
    assert kv_bytes_per_token(gqa, "bf16", 1) == 2 * 32 * 8 * 128 * 2  # 128 KiB
    assert kv_bytes_per_token(mla, "bf16", 1) == 61 * (512 + 64) * 2  # compressed latent
    assert kv_bytes_per_token(gqa, "fp8", 1) == kv_bytes_per_token(gqa, "bf16", 1) / 2


def test_sliding_window_layers_cap_their_cache() -> None:
    gemma = find_preset("gemma-2-9b").arch
    assert gemma.sliding_window == 4096
    short = kv_cache_bytes(gemma, "bf16", 4096, 1)
    long = kv_cache_bytes(gemma, "bf16", 8192, 1)
    # half the layers stop growing at the 4096-token window
    assert long == pytest.approx(short * 1.5, rel=0.01)


def test_tensor_parallel_serving_splits_weights_and_kv() -> None:
    base = EstimateRequest(model="llama-3.1-70b", task="infer", seq_len=16384, batch=8,
                           gpu="h100-80gb")
    one = estimate_of(base).per_gpu_bytes
    four = estimate_of(replace(base, gpu_count=4)).per_gpu_bytes
    assert four["weights"] == pytest.approx(one["weights"] / 4, rel=1e-6)
    assert four["kv_cache"] == pytest.approx(one["kv_cache"] / 4, rel=1e-6)


def test_kv_heads_replicate_when_tp_exceeds_them() -> None:
    base = EstimateRequest(model="llama-3-8b", task="infer", seq_len=8192, batch=4)
    tp8 = estimate_of(replace(base, gpu_count=8)).per_gpu_bytes["kv_cache"]
    tp16 = estimate_of(replace(base, gpu_count=16, tp=16)).per_gpu_bytes["kv_cache"]
    assert tp16 == tp8  # 8 KV heads: beyond tp=8 each GPU still keeps one head


def test_max_concurrent_sequences_budgeted_like_vllm() -> None:
    base = EstimateRequest(model="llama-3.1-8b", task="infer", seq_len=8192, gpu="h100-80gb")
    est = estimate_of(base)
    per_seq = est.details["kv_bytes_per_sequence"]
    assert per_seq == 8192 * 128 * 1024
    n = est.details["max_concurrent_sequences"]
    assert isinstance(n, int)
    # 0.9 x 79 GiB - 16 GB weights - workspace - 1.5 GiB: about 50 GB of KV, ~46 sequences
    assert 40 <= n <= 55
    longer = estimate_of(replace(base, seq_len=32768)).details["max_concurrent_sequences"]
    assert isinstance(longer, int) and longer < n / 3


def test_serving_fits_flag_and_no_training_components() -> None:
    est = estimate_of(EstimateRequest(model="llama-3.1-70b", task="infer", gpu="h100-80gb"))
    assert est.fits is False  # 141 GB of bf16 weights
    assert est.per_gpu_bytes["optimizer"] == est.per_gpu_bytes["gradients"] == 0
    assert estimate_of(EstimateRequest(model="llama-3.1-70b", quantization="awq", task="infer",
                                    gpu="h100-80gb")).fits is True


@pytest.mark.parametrize(("field", "value"), [("quantization", "int3"), ("kv_cache_dtype", "fp6")])
def test_unknown_formats_are_named(field: str, value: str) -> None:
    with pytest.raises(InvalidInput) as err:
        estimate_of(EstimateRequest(model="llama-3-8b", task="infer", **{field: value}))
    assert err.value.field == field


def test_planned_serving_layout_reports_its_own_per_gpu_figures() -> None:
    body = answer_dict(compute_answer(EstimateRequest(
        model="llama-3.1-70b", task="infer", seq_len=32768, concurrent=64,
        gpu="h100-80gb")).answer)
    lay, per = body["plan"], body["per_gpu_bytes"]
    # 16 H100s as two replicas of TP=8 (one engine would run TP=8 x PP=2 across two nodes)
    assert lay["dp"] * lay["tp"] * lay["pp"] == lay["gpus"] == body["min_gpus"] == 16
    assert (lay["dp"], lay["tp"], lay["pp"]) == (2, 8, 1)
    weights = estimate_of(EstimateRequest(model="llama-3.1-70b", task="infer")).per_gpu_bytes["weights"]
    assert per["weights"] == pytest.approx(weights / (lay["tp"] * lay["pp"]), rel=0.01)
    assert per["total"] <= 0.9 * 85e9  # within vLLM's 90% of an H100's usable memory


def test_a_stated_tensor_parallel_size_stays_fixed_in_the_serving_plan() -> None:
    plan = plan_of(EstimateRequest(model="llama-3.1-70b", task="infer", seq_len=32768,
                                     concurrent=64, tp=4, gpu="h100-80gb"))
    assert plan.fits and plan.serving is not None and plan.serving.tp == 4
    assert plan.gpus == 4 * plan.serving.pp * plan.serving.replicas


def test_fp8_checkpoints_are_served_in_fp8_unless_asked_otherwise() -> None:
    """Issue 16: "how many H100s to serve deepseek-v3 at 128k context for 8 users" planned
    16-bit weights although the checkpoint is fp8 with 128x128 block scales."""
    base = EstimateRequest(model="deepseek-v3", task="infer", seq_len=131072, concurrent=8,
                           gpu="h100-80gb")
    native = compute_answer(base).answer
    body = answer_dict(native)
    assumed = {a["field"]: a for a in body["assumptions"]}
    assert assumed["quantization"]["value"] == "fp8-block"
    assert assumed["quantization"]["origin"] == "default"
    sixteen = answer_dict(compute_answer(replace(base, quantization="bf16")).answer)
    assert body["min_gpus"] < sixteen["min_gpus"]
    weights = estimate_of(replace(base, gpu=None)).per_gpu_bytes["weights"]
    assert weights == pytest.approx(serving_weight_bytes(find_preset("deepseek-v3").arch,
                                                         "fp8-block"))


def test_gpt_oss_serves_from_its_mxfp4_checkpoint_on_one_gpu() -> None:
    est = estimate_of(EstimateRequest(model="gpt-oss-120b", task="infer", seq_len=8192,
                                      gpu="h100-80gb"))
    assert est.per_gpu_bytes["weights"] / 2**30 == pytest.approx(60.8, abs=0.05)
    assert est.fits is True


# ---- hybrids: attention KV and linear-attention state, each split its own way --------------

NEXT_KV_PER_TOKEN = 12 * 2 * 2 * 256 * 2  # 12 attention layers x K, V x 2 KV heads x 256 x 2 B
NEXT_STATE_VLLM = 36 * (32 * 128 * 128 + 8192 * 3) * 2  # vLLM: bf16, kernel - 1 conv columns


def _next_share(tp: int, seq_len: int = 32768) -> ServingShare:
    job = resolve(EstimateRequest(model="qwen3-next-80b-a3b", task="infer", seq_len=seq_len,
                                  tp=tp, gpu_count=tp)).job
    return serving_share(job, tp, 1, ServingBudget())


@pytest.mark.parametrize("tp", [1, 2, 4, 8, 16])
def test_qwen3_next_counts_the_attention_kv_replicated_and_the_deltanet_state_split(tp: int
                                                                                   ) -> None:
    # 2 KV heads: split up to TP 2, one head per GPU beyond; the Gated DeltaNet state: / tp
    kv_heads_here = max(1, 2 // tp)
    expected = NEXT_KV_PER_TOKEN * 32768 * kv_heads_here / 2 + NEXT_STATE_VLLM / tp
    assert _next_share(tp).kv_per_sequence == round(expected)


def test_qwen3_next_at_tp_4_holds_half_the_kv_but_a_quarter_of_the_state() -> None:
    share = _next_share(4)
    kv = next(c for c in share.components if c.key == "kv_cache")
    assert (kv.term_map["kv_share"], kv.term_map["state_share"]) == (0.5, 0.25)
    assert kv.term_map["linear_state"] == NEXT_STATE_VLLM
    assert share.kv_per_sequence == 402_653_184 + 9_879_552  # was 422,412,288 with one share


def test_hf_prefill_caches_kv_in_attention_layers_only_plus_the_whole_state() -> None:
    """transformers generate: 12 of 48 layers hold the prompt's K and V; every DeltaNet layer
    holds a conv state of conv_kernel (4) columns in bf16 and an fp32 recurrent state."""
    job = resolve(EstimateRequest(model="qwen3-next-80b-a3b", task="infer", seq_len=4096,
                                  framework="hf")).job
    kv = serving_share(job, 1, 1, ServingBudget()).components[1]
    hf_state = 36 * (32 * 128 * 128 * 4 + 8192 * 4 * 2)
    assert kv.key == "kv_cache" and kv.term_map["layers"] == 12
    assert kv.bytes == NEXT_KV_PER_TOKEN * 4096 + hf_state == 178_520_064  # was 402,653,184


def test_tp_must_divide_the_linear_attention_key_heads() -> None:
    arch = find_preset("qwen3-next-80b-a3b").arch
    block = arch.linear_attention
    assert block is not None and serving_tp_ok(arch, 16)
    odd = arch.with_changes(heads=32, linear_attention=replace(block, key_heads=8))
    assert serving_tp_ok(odd, 8) and not serving_tp_ok(odd, 16)


def test_gpus_without_a_tp_size_get_the_largest_tp_vllm_accepts_and_pp_over_the_rest() -> None:
    """6 A100s for a 64-head model: TP=6 is refused by vLLM, TP=2 x PP=3 is not."""
    est = estimate_of(EstimateRequest(model="llama-3.1-70b", task="infer", seq_len=16384,
                                      concurrent=32, gpu="a100-80gb", gpu_count=6))
    assert (est.job.parallel.tp, est.job.parallel.pp) == (2, 3)


def test_a_smaller_tp_serves_more_when_tp_would_copy_the_kv_cache() -> None:
    """Qwen3-30B-A3B has 4 KV heads: TP=8 keeps a quarter of the cache on every GPU, so 100
    sequences of 32k fit on one node as 4 replicas of TP=2, not 16 GPUs of TP=8; and not on 6 as
    TP=2 x PP=3, an engine size nobody deploys (``deployable_engine``)."""
    answer = compute_answer(EstimateRequest(model="qwen3-30b-a3b", task="infer", seq_len=32768,
                                            concurrent=100, gpu="h100-80gb")).answer
    assert answer.planner is not None and answer.min_gpus == 8
    assert (answer.plan.dp, answer.plan.tp, answer.plan.pp) == (4, 2, 1)


def test_llama_cpp_serves_the_home_setups_vllm_would_not() -> None:
    """llama.cpp/ollama reserve nothing ahead, capture no CUDA graphs, run a 512-token compute
    buffer and split layers over GPUs: Qwen2.5-32B Q4_K_M at 8k fits one 3090, Llama-3.1-70B
    Q4_K_M at 8k two (which vLLM's budget refuses)."""
    one = compute_answer(EstimateRequest(model="qwen2.5-32b", task="infer",
                                         quantization="gguf-q4_k_m", seq_len=8192,
                                         gpu="rtx3090-24gb", gpu_count=1)).answer
    assert one.planner is not None and one.planner.fits and one.planner.stack == "llamacpp"
    two = compute_answer(EstimateRequest(model="llama-3.1-70b", task="infer",
                                         quantization="gguf-q4_k_m", seq_len=8192,
                                         gpu="rtx3090-24gb", gpu_count=2)).answer
    assert two.planner is not None and two.planner.fits
    assert two.plan.tp == 1 and two.plan.pp == 2  # layers split, no tensor parallelism
    vllm = compute_answer(EstimateRequest(model="qwen2.5-32b", task="infer", framework="vllm",
                                          quantization="gguf-q4_k_m", seq_len=8192,
                                          gpu="rtx3090-24gb", gpu_count=1)).answer
    assert vllm.planner is not None and not vllm.planner.fits


def test_a_small_model_at_high_concurrency_is_served_by_replicas_not_pipeline_stages() -> None:
    """Llama-3.1-8B for 500 users at 2k: one engine of TP=1 x PP=3 would do, but an engineer runs
    three replicas of one GPU (vLLM --data-parallel-size 3), each with a third of the sequences;
    the per-GPU figures are one replica's."""
    answer = compute_answer(EstimateRequest(model="llama-3.1-8b", task="infer", seq_len=2048,
                                            concurrent=500, gpu="h100-80gb")).answer
    lay = answer.plan
    assert (answer.min_gpus, lay.dp, lay.tp, lay.pp) == (3, 3, 1, 1)
    assert "3 replicas of TP=1" in answer.verdict
    kv_per_sequence = answer.details["kv_bytes_per_sequence"]
    assert isinstance(kv_per_sequence, int | float)
    assert answer.per_gpu_bytes.kv_cache == pytest.approx(167 * kv_per_sequence, rel=0.01)
    argv = answer.launch["vllm"].argv
    assert argv[argv.index("--data-parallel-size") + 1] == "3"
    assert argv[argv.index("--max-num-seqs") + 1] == "167"


def test_a_stated_tp_on_more_gpus_runs_replicas_each_with_its_share() -> None:
    """Llama-3.2-1B with tp=1 on 16 A10Gs for 2,000 users: 16 replicas of one GPU, each with
    125 sequences (the stated layout was charged all 2,000 on every GPU: 274 GB, 'over');
    across 4 nodes, one server per replica."""
    answer = compute_answer(EstimateRequest(model="llama-3.2-1b", task="infer", tp=1,
                                            concurrent=2000, gpu="a10g-24gb",
                                            gpu_count=16)).answer
    assert answer.fits and (answer.plan.dp, answer.plan.tp, answer.plan.pp) == (16, 1, 1)
    assert answer.per_gpu_bytes.total < 24e9
    argv = answer.launch["vllm"].argv
    assert "--data-parallel-size" not in argv and "--pipeline-parallel-size" not in argv
    assert argv[argv.index("--max-num-seqs") + 1] == "125"


def test_pipeline_stages_hold_the_busiest_stage_not_an_even_split() -> None:
    """DeepSeek-V3's 61 layers over 6 stages: a stage holds 11 layers, all MoE (the 3 dense
    layers sit in one stage), so the busiest GPU holds about 19% of the weights, not a sixth;
    150 sequences of 8k no longer 'serve' on 6 H200s."""
    arch = find_preset("deepseek-v3").arch
    assert busiest_share(arch, 1, 6) == pytest.approx(11 / 58, rel=0.01)
    assert busiest_share(find_preset("llama-3.1-70b").arch, 4, 2) == pytest.approx(1 / 8)
    answer = compute_answer(EstimateRequest(model="deepseek-v3", task="infer", seq_len=8192,
                                            concurrent=150, gpu="h200-141gb",
                                            gpu_count=6)).answer
    assert answer.planner is not None and not answer.planner.fits


def test_how_many_fit_is_answered_with_the_layout_that_holds_the_most() -> None:
    """Qwen2.5-72B AWQ on 2x A100 80GB at 16k, no concurrency stated: TP=2 keeps one copy of
    the weights and holds 20 sequences; two replicas of one GPU hold 12 (each keeps its own
    copy). The answer is 20, with the replicas offered beside it."""
    answer = compute_answer(EstimateRequest(model="qwen2.5-72b", task="infer", seq_len=16384,
                                            quantization="awq", gpu="a100-80gb",
                                            gpu_count=2)).answer
    assert answer.planner is not None and answer.planner.fits
    assert answer.planner.layout is not None
    lay = answer.planner.layout.plan
    assert (lay.dp, lay.tp, lay.max_concurrent_sequences) == (1, 2, 20)
    assert any("2 replicas of TP=1" in a.layout and "up to 12 sequences" in a.reason
               for a in answer.planner.alternatives)
    stated = compute_answer(EstimateRequest(model="qwen2.5-72b", task="infer", seq_len=16384,
                                            quantization="awq", concurrent=8,
                                            gpu="a100-80gb", gpu_count=2)).answer
    assert stated.planner is not None and stated.planner.layout is not None
    # 8 sequences asked: replicas, no tensor-parallel traffic
    assert (stated.planner.layout.plan.dp, stated.planner.layout.plan.tp) == (2, 1)


def test_an_mla_moe_model_is_served_with_data_parallel_attention_and_expert_parallelism() -> None:
    """DeepSeek-V3 at 32k x 64 on 8 H200s: its latent KV cache cannot be split by heads, so
    under TP=8 every GPU holds every sequence's whole cache. Attention data parallel with the
    experts split over the 8 ranks (vLLM --data-parallel-size 8 --enable-expert-parallel) keeps
    each sequence's cache on one GPU: each holds the attention and dense layers whole, 1/8 of
    the routed experts, and 8 of the 64 sequences."""
    answer = compute_answer(EstimateRequest(model="deepseek-v3", task="infer", seq_len=32768,
                                            concurrent=64, gpu="h200-141gb",
                                            gpu_count=8)).answer
    assert answer.planner is not None and answer.planner.fits
    assert answer.planner.layout is not None
    lay = answer.planner.layout.plan
    assert (lay.dp, lay.ep, lay.tp, lay.pp) == (8, 8, 1, 1)
    arch = find_preset("deepseek-v3").arch
    per_sequence = answer.details["kv_bytes_per_sequence"]
    assert isinstance(per_sequence, int | float)
    assert per_sequence == pytest.approx(32768 * attention_kv_bytes_per_token(
        arch, "auto", 32768), rel=0.01)  # a whole sequence's latent cache on its rank
    weights = answer.planner.layout.per_gpu_bytes.weights
    experts = expert_weight_params(arch)
    assert weights < (experts / 8 + (parameter_count(arch) - experts)) * 1.1  # fp8-block bytes
    tp8 = compute_answer(EstimateRequest(model="deepseek-v3", task="infer", seq_len=32768,
                                         concurrent=64, gpu="h200-141gb", gpu_count=8,
                                         tp=8)).answer
    assert tp8.planner is not None and tp8.planner.layout is not None
    assert lay.max_concurrent_sequences is not None
    assert lay.max_concurrent_sequences > 2 * (tp8.planner.layout.plan.max_concurrent_sequences or 0)


def test_one_sequence_is_served_by_tensor_parallelism_and_capacity_never_by_pipeline_stages(
        ) -> None:
    """DeepSeek-V3 at 32k on 8 H200s: one sequence reads the attention and dense weights split
    8 ways under TP=8, whole on one rank under DP attention, so TP=8 (which holds 21); asked how
    many fit, DP attention + EP (104), not 8 pipeline stages inside the node (each token would
    pass 8 GPUs in turn), whatever they hold."""
    def layout(concurrent: int | None) -> tuple[int, int, int, int]:
        answer = compute_answer(EstimateRequest(model="deepseek-v3", task="infer",
                                                seq_len=32768, concurrent=concurrent,
                                                gpu="h200-141gb", gpu_count=8)).answer
        assert answer.planner is not None and answer.planner.layout is not None
        lay = answer.planner.layout.plan
        return lay.tp, lay.pp, lay.dp, lay.ep

    assert layout(1) == (8, 1, 1, 1)
    assert layout(None) == (1, 1, 8, 8)


def test_expert_parallelism_over_the_tensor_parallel_ranks_splits_like_tp() -> None:
    """SGLang's --tp 16 --ep 16 on two 8x H200 nodes spreads the experts over the same 16 ranks
    that split attention: every weight is split 16 ways, as under TP=16 alone (it had been
    refused as 'ep must divide dp', then sized with the attention whole on every GPU)."""
    both = compute_answer(EstimateRequest(model="deepseek-v3", task="infer", framework="sglang",
                                          tp=16, ep=16, seq_len=4096, gpu="h200-141gb",
                                          gpu_count=16)).answer
    tp = compute_answer(EstimateRequest(model="deepseek-v3", task="infer", framework="sglang",
                                        tp=16, seq_len=4096, gpu="h200-141gb",
                                        gpu_count=16)).answer
    assert both.per_gpu_bytes.weights == tp.per_gpu_bytes.weights
    assert both.details["max_concurrent_sequences"] == tp.details["max_concurrent_sequences"]


def test_served_lora_adapters_take_their_slots_up_front() -> None:
    """vLLM --enable-lora --max-loras 8 --max-lora-rank 64 on Llama 3.1 8B: 8 slots of rank-64
    adapters on every linear (167.8M parameters each, 16-bit) are allocated at start: 2.7 GB that
    the KV cache does not get."""
    ask = EstimateRequest(model="llama-3.1-8b", task="infer", seq_len=8192, concurrent=16,
                          gpu="l40s-48gb", gpu_count=1)
    plain = estimate_of(ask)
    served = estimate_of(replace(ask, lora_slots=8, lora_rank=64))
    extra = served.per_gpu_bytes["weights"] - plain.per_gpu_bytes["weights"]
    assert extra == 8 * 2 * 167_772_160
    assert served.details["max_concurrent_sequences"] < plain.details["max_concurrent_sequences"]
    argv = compute_answer(replace(ask, lora_slots=8, lora_rank=64)).answer.launch["vllm"].argv
    assert argv[argv.index("--max-loras") + 1] == "8" and "--enable-lora" in argv


def test_more_gpus_with_4_bit_weights_comes_before_more_gpus_in_16_bit() -> None:
    """Llama 3.1 70B on one 4090 (review 17): 8 cards in bf16, but 2 with AWQ int4, which is
    what anyone with 4090s would do; offered first, with the format and its count."""
    plan = plan_of(EstimateRequest(model="llama-3.1-70b", task="infer", gpu="rtx4090-24gb",
                                   gpu_count=1))
    assert plan.fix is not None and plan.fix.changes == {"quantization": "awq", "gpu_count": 2}
    assert plan.min_gpus is not None and plan.min_gpus > 2

