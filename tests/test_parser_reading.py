"""The reading pipeline, step by step: tokens with their suffixes, values by attribute, numbers
bound by type in any order, what is not used named in the reply, pasted commands and configs,
follow-ups, hardware that is unknown or not covered, and bounded caches."""

from __future__ import annotations

from itertools import permutations
from typing import Any

import pytest
from ask_support import ask

from service.parser import parse
from service.parser.amounts import amount
from service.parser.gpu_names import closest_gpus, resolve
from service.parser.model_names import family_of
from service.parser.tokens import tokenize

SERVING = {"model": "llama-3.1-8b", "task": "infer", "gpu": "h100-80gb", "gpu_count": 1, "seq_len": 8192,
           "concurrent": 8}
TRAINING = {"model": "llama-3-8b", "task": "train", "gpu": "a100-80gb", "gpu_count": 8, "seq_len": 4096,
            "zero_stage": 3}


@pytest.mark.parametrize(("text", "value", "unit"), [
    ("4k", 4, "k"), ("32K", 32, "k"), ("1T", 1, "t"), ("80gb", 80, "gb"), ("80 GB", 80, "gb"),
    ("8x", 8, "x"), ("x8", 8, "x"), ("2e12", 2e12, ""), ("$2.5", 2.5, "$"), ("40%", 40, "%"),
    ("1,000,000", 1e6, ""),
    ("2 trillion", 2, "t"), ("1.5 usd", 1.5, "$"), ("one", 1, ""),
])
def test_numbers_keep_their_suffix(text: str, value: float, unit: str) -> None:
    (token,) = [t for t in tokenize(text.lower()) if t.kind == "num"]
    assert (token.value, token.unit) == (value, unit)


def test_glued_keys_split_and_names_keep_their_digits() -> None:
    kinds = [(t.kind, t.text) for t in tokenize("tp4 r16 a770 v0.3 fp8")]
    assert kinds[:4] == [("word", "tp"), ("num", "4"), ("word", "r"), ("num", "16")]
    assert ("word", "a770") in kinds and ("word", "v0.3") in kinds and ("word", "fp8") in kinds


def test_k_is_1024_for_context_lengths_only() -> None:
    (k32,) = tokenize("32k")
    assert amount(k32, "seq_len")[0] == 32768 and amount(k32, "concurrent")[0] == 32000
    (k100,) = tokenize("100k")
    assert amount(k100, "seq_len")[0] == 100_000  # not a power of two: decimal
    (t1,) = tokenize("1t")
    assert amount(t1, "tokens")[0] == 1e12


ISSUE = [
    ("serve llama 3 8b 32k ctx 8 users on an h100",
     {"model": "llama-3-8b", "seq_len": 32768, "concurrent": 8, "gpu": "h100-80gb", "gpu_count": 1}),
    ("llama 3.1 8b, 8k ctx 64 concurrent, h100",
     {"model": "llama-3.1-8b", "seq_len": 8192, "concurrent": 64}),
    ("qwen2.5 7b 16k context 4 users on a l4", {"model": "qwen2.5-7b", "seq_len": 16384, "concurrent": 4}),
    ("4k ctx 1 user on a t4", {"seq_len": 4096, "concurrent": 1, "gpu": "t4-16gb"}),
]


@pytest.mark.parametrize(("text", "fields"), ISSUE)
def test_the_issue_phrasings(text: str, fields: dict[str, Any]) -> None:
    merged = parse(text).merged
    assert {k: merged.get(k) for k in fields} == fields


@pytest.mark.parametrize("order", list(permutations(["llama 3 8b", "32k ctx", "8 users", "on an h100"])))
def test_any_order_binds_the_same(order: tuple[str, ...]) -> None:
    for sep in (" ", ", "):
        merged = parse("serve " + sep.join(order)).merged
        assert (merged["seq_len"], merged["concurrent"], merged["gpu"]) == (32768, 8, "h100-80gb")


@pytest.mark.parametrize(("phrase", "field", "value"), [
    ("32k ctx", "seq_len", 32768), ("ctx 32k", "seq_len", 32768), ("context of 32k", "seq_len", 32768),
    ("32768-token context", "seq_len", 32768), ("8k tokens of context", "seq_len", 8192),
    ("8 users", "concurrent", 8), ("for 8 concurrent", "concurrent", 8),
    ("8 parallel requests", "concurrent", 8), ("16k users", "concurrent", 16000), ("bs=8", "batch", 8),
    ("max_num_seqs 64", "max_num_seqs", 64),
])
def test_serving_keywords_on_either_side(phrase: str, field: str, value: int) -> None:
    assert parse(f"serve llama 3 8b {phrase} on 2 h100").merged[field] == value


@pytest.mark.parametrize(("phrase", "field", "value"), [
    ("mbs 2", "micro_batch", 2), ("bs=8", "micro_batch", 8), ("gbs 1024", "global_batch", 1024),
    ("tp 4", "tp", 4), ("4-way tensor parallel", "tp", 4), ("pp=2", "pp", 2), ("1T tokens", "tokens", 1e12),
    ("2e12 tokens", "tokens", 2e12), ("40% mfu", "mfu", 0.4), ("$2.5/h", "price_per_gpu_hour", 2.5),
])
def test_training_keywords(phrase: str, field: str, value: float) -> None:
    assert parse(f"train llama 3 8b {phrase} seq 4096 on 8 h100s").merged[field] == value


def test_numbers_not_used_are_named_in_the_reply() -> None:
    parsed = parse("train a 7b on 8 h100s for 3 epochs, we have 5 engineers")
    assert parsed.ignored == ("3 epochs", "5 engineers")
    reply = ask("train a 7b on 8 h100s for 3 epochs, we have 5 engineers").reply
    assert "I did not use: `3 epochs`, `5 engineers`" in reply
    assert parse("pretrain a 1b on 20B tokens for 2 epochs on 8 a100s").merged["tokens"] == 4e10
    lone = parse("what about 8?", SERVING)
    assert lone.intent == "invalid" and lone.problem is not None and "8" in lone.problem


PASTES = [
    ("vllm serve meta-llama/Llama-3.1-8B-Instruct --tensor-parallel-size 4 --max-model-len 32768 "
     "--max-num-seqs 64 --kv-cache-dtype fp8 --quantization awq",
     {"tp": 4, "seq_len": 32768, "max_num_seqs": 64, "kv_cache_dtype": "fp8", "quantization": "awq"}),
    ("python -m sglang.launch_server --model-path Qwen/Qwen2.5-72B-Instruct --tp 4 --context-length 32768 "
     "--mem-fraction-static 0.85", {"tp": 4, "seq_len": 32768, "memory_headroom": 0.85}),
    ("torchrun --nnodes 2 --nproc_per_node 8 train.py --model llama-3-8b", {"nodes": 2, "gpu_count": 16}),
    ("axolotl: adapter: qlora\nlora_r: 32\nsequence_len: 4096\nmicro_batch_size: 2\n"
     "optimizer: paged_adamw_8bit\nbase_model: meta-llama/Meta-Llama-3-8B",
     {"finetune_method": "qlora", "lora_rank": 32, "seq_len": 4096, "micro_batch": 2,
      "optimizer": "paged_adamw_8bit"}),
    ('{"train_micro_batch_size_per_gpu": 4, "zero_optimization": {"stage": 2}, "bf16": {"enabled": true}} '
     "llama 2 13b on 8 a100", {"micro_batch": 4, "zero_stage": 2, "precision": "bf16_mixed"}),
    ("--tensor-model-parallel-size 8 --pipeline-model-parallel-size 4 --micro-batch-size 1 "
     "--global-batch-size 1024 --seq-length 8192 llama 3 70b on 256 h100",
     {"tp": 8, "pp": 4, "micro_batch": 1, "global_batch": 1024, "seq_len": 8192}),
    ('TrainingArguments(per_device_train_batch_size=8, bf16=True, optim="adamw_torch_fused") '
     "mistral 7b on 4 a100",
     {"micro_batch": 8, "precision": "bf16_mixed", "optimizer": "adamw_torch_fused"}),
]


@pytest.mark.parametrize(("text", "fields"), PASTES)
def test_pasted_commands_and_configs(text: str, fields: dict[str, Any]) -> None:
    merged = parse(text).merged
    assert {k: merged.get(k) for k in fields} == fields


@pytest.mark.parametrize(("text", "previous", "fields"), [
    ("what about 4x?", SERVING, {"gpu_count": 4, "gpu": "h100-80gb", "seq_len": 8192}),
    ("what if we only have 4 of them", SERVING, {"gpu_count": 4, "gpu": "h100-80gb"}),
    ("and on h200?", SERVING, {"gpu": "h200-141gb", "concurrent": 8}),
    ("same but 128k", SERVING, {"seq_len": 131072, "concurrent": 8}),
    ("fp8 kv?", SERVING, {"kv_cache_dtype": "fp8", "seq_len": 8192}),
    ("2x the context", SERVING, {"seq_len": 16384}),
    ("with lora instead", TRAINING,
     {"finetune_method": "lora", "task": "finetune", "model": "llama-3-8b"}),
    ("what about 4 nodes of 8", TRAINING, {"nodes": 4, "gpu_count": 32}),
])
def test_follow_ups_change_one_thing(text: str, previous: dict[str, Any], fields: dict[str, Any]) -> None:
    merged = parse(text, previous).merged
    assert {k: merged.get(k) for k in fields} == fields


@pytest.mark.parametrize(("text", "name"), [
    ("run llama 3 8b on a gtx 1080 ti", "gtx 1080 ti"), ("serve qwen2.5 7b on my RTX 2060", "RTX 2060"),
    ("llama 3 8b on a radeon rx 7900 xtx", "radeon rx 7900 xtx"),
    ("llama 3.1 8b on an intel arc a770 16gb", "intel arc a770 16gb"),
])
def test_unknown_gpus_are_asked_about_never_swapped(text: str, name: str) -> None:
    parsed = parse(text)
    assert parsed.unknown is not None and parsed.unknown.name == name and "gpu" not in parsed.merged
    assert parsed.clarify is not None
    assert parsed.clarify.startswith(f"I don't know the {name}; closest I know:")
    assert all(resolve(gid) == gid for gid in parsed.unknown.suggestions)


@pytest.mark.parametrize("text", ["on mac m2 64gb", "can i run mistral 7b on my macbook pro m3 max",
                                  "qwen 2.5 7b cpu only 128gb ram", "llama 3 8b on a tpu v5e"])
def test_apple_cpu_and_tpu_are_not_covered(text: str) -> None:
    parsed = parse(text)
    assert parsed.intent == "invalid" and parsed.problem is not None
    assert "n't covered: fitcheck sizes jobs for NVIDIA and AMD GPUs" in parsed.problem
    assert parse("llama 3 8b with cpu offload on a 4090").problem is None


def test_caches_are_bounded() -> None:
    for i in range(3000):
        family_of(f"word{i}x", True)
    info = family_of.cache_info()
    assert info.maxsize is not None and info.currsize <= info.maxsize
    assert resolve.cache_info().maxsize is not None and closest_gpus.cache_info().maxsize is not None


@pytest.mark.parametrize(("text", "fields"), [
    ("qwen2.5 7b inference, 2k input + 512 output tokens, 50 concurrent, l4",
     {"seq_len": 2560, "concurrent": 50}),
    ("qlora gemma 2 27b with 4k sequences, batch size 1, one 48gb gpu", {"seq_len": 4096, "micro_batch": 1}),
    ("pretrain llama 3.1 8b on 8x h100, 4k seq, global batch 4M tokens", {"global_batch": 1024}),
    ("train llama 3 8b on a p4d.24xlarge, seq 4096", {"gpu": "a100-40gb", "gpu_count": 8}),
    ("2 p5.48xlarge for llama 3 70b training", {"gpu": "h100-80gb", "gpu_count": 16, "nodes": 2}),
    ("will llama 3 70b run on 2 x 80 gig cards at 8k context", {"gpu": "h100-80gb", "gpu_count": 2}),
    ("llama 3 8b, context 1M, 1 user, h200", {"seq_len": 1 << 20, "model": "llama-3-8b"}),
])
def test_counted_in_tokens_instances_and_memory(text: str, fields: dict[str, Any]) -> None:
    merged = parse(text).merged
    assert {k: merged.get(k) for k in fields} == fields


def test_a_second_value_is_said_not_dropped() -> None:
    parsed = parse("serve llama 3 8b 32k ctx 8 users on h100 for 0 users")
    assert parsed.merged["concurrent"] == 8 and "concurrent: used 8, not 0" in parsed.notes


@pytest.mark.parametrize(("text", "fields"), [
    ("70b q4 on dual 3090s with 4k context", {"quantization": "gguf-q4_k_m", "gpu_count": 2}),
    ("llama 3 8b gguf q8 on a 4090", {"quantization": "gguf-q8_0"}),
    ("can we fine tune llama 3 8b on a DGX H100", {"gpu": "h100-80gb", "gpu_count": 8, "nodes": 1}),
    ("1x A100 (40GB), mistral 7b, 8k context, inference", {"gpu": "a100-40gb", "gpu_count": 1}),
    ("finetune llama 3 8b on 4 gpus with 24gb each", {"gpu": "rtx4090-24gb", "gpu_count": 4}),
])
def test_hardware_and_formats_as_people_write_them(text: str, fields: dict[str, Any]) -> None:
    merged = parse(text).merged
    assert {k: merged.get(k) for k in fields} == fields
    assert parse("deliver by q3, llama 3 8b on a 4090").merged.get("quantization") is None


@pytest.mark.parametrize(("text", "field", "values"), [
    ("llama 3 8b serving: 4k or 8k context on an l4?", "seq_len", [4096, 8192]),
    ("8 vs 16 users for llama 3 8b on h100", "concurrent", [8, 16]),
    ("train llama 3 8b bs 8 or bs 16 on 8 a100", "micro_batch", [8, 16]),
    ("serve llama 3 8b at 8k ctx; compare 1, 2 and 4 h100s", "gpu_count", [1, 2, 4]),
])
def test_comparisons_of_numbers(text: str, field: str, values: list[int]) -> None:
    parsed = parse(text)
    assert parsed.compare_field == field and [v.changes[field] for v in parsed.compare] == values


@pytest.mark.parametrize(("text", "fields"), [
    ("how long to fine-tune llama 3 8b on 1M samples of 512 tokens on 4 a100s",
     {"tokens": 512e6, "seq_len": 512}),
    ("training throughput for 7b on 64 h100 w/ 2M token batches, seq 4096", {"global_batch": 512}),
    ("KV cache for 128 concurrent users at 2k tokens each for llama 3 8b",
     {"seq_len": 2048, "concurrent": 128}),
    ("Can Mixtral 8x7B fit on 2 RTX 4090s in 4bit?", {"model": "mixtral-8x7b", "quantization": "int4"}),
])
def test_data_and_batches_in_tokens(text: str, fields: dict[str, Any]) -> None:
    parsed = parse(text)
    assert {k: parsed.merged.get(k) for k in fields} == fields and not parsed.ignored


@pytest.mark.parametrize(("text", "fields"), [
    ("llama3:70b-instruct-q4_K_M on 2x3090, 8k ctx", {"model": "llama-3-70b", "quantization": "gguf-q4_k_m"}),
    ("ollama run qwen2.5:7b on a 4090", {"model": "qwen2.5-7b", "gpu": "rtx4090-24gb"}),
    ("lamma 3 8b on a 4090 with 8k ctx", {"model": "llama-3-8b", "seq_len": 8192}),
])
def test_model_names_as_typed(text: str, fields: dict[str, Any]) -> None:
    merged = parse(text).merged
    assert {k: merged.get(k) for k in fields} == fields
