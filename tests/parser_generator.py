"""Generated chat questions with known answers: each slot (model, task, context, concurrency or
batch, GPU type and count, parallelism, precision, quantization, LoRA rank) rendered in the surface
forms people use in Slack and tickets, in shuffled order, with varied separators and filler.

The forms were written from how people write, before the parser was run on them; a form is never
dropped because the parser gets it wrong. ``generate(n, seed)`` is deterministic.

Each ``Case`` carries ``expected``: slot -> the exact request fields that slot must produce; and
``absent``: request fields no slot stated, which must not appear (a number bound to the wrong
field shows up as a wrong value or as an unexpected field). ``stray`` lists numbers in the filler
that belong to no field: the parser must name them in ``Parsed.ignored``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

# model id -> how people write it (the expected field is the id)
MODELS: dict[str, tuple[str, ...]] = {
    "llama-3-8b": ("llama 3 8b", "Llama-3-8B", "llama3 8b", "meta-llama/Meta-Llama-3-8B-Instruct",
                   "Llama 3 8B Instruct", "llama-3-8b"),
    "llama-3.1-8b": ("llama 3.1 8b", "Llama-3.1-8B-Instruct", "llama3.1-8b", "meta-llama/Llama-3.1-8B",
                     "llama 3.1 8B"),
    "llama-3.1-70b": ("llama 3.1 70b", "Llama-3.1-70B-Instruct", "llama3.1 70b",
                      "meta-llama/Llama-3.1-70B-Instruct", "Llama 3.1 70B"),
    "llama-3.3-70b": ("llama 3.3 70b", "Llama-3.3-70B-Instruct", "llama3.3 70B"),
    "llama-2-13b": ("llama 2 13b", "Llama-2-13b-chat-hf", "llama2 13b"),
    "qwen2.5-7b": ("qwen2.5 7b", "Qwen2.5-7B-Instruct", "qwen 2.5 7b", "Qwen/Qwen2.5-7B", "qwen2.5-7b"),
    "qwen2.5-72b": ("qwen2.5 72b", "Qwen2.5-72B-Instruct", "qwen 2.5 72B"),
    "qwen3-32b": ("qwen3 32b", "Qwen3-32B", "qwen 3 32b"),
    "qwen3-8b": ("qwen3 8b", "Qwen3-8B", "Qwen/Qwen3-8B"),
    "mistral-7b-v0.3": ("mistral 7b v0.3", "Mistral-7B-Instruct-v0.3", "mistralai/Mistral-7B-v0.3"),
    "mixtral-8x7b": ("mixtral 8x7b", "Mixtral-8x7B-Instruct-v0.1", "mixtral 8x7B"),
    "gemma-2-9b": ("gemma 2 9b", "gemma-2-9b-it", "gemma2 9b", "Gemma 2 9B"),
    "gemma-3-27b": ("gemma 3 27b", "gemma-3-27b-it", "Gemma3 27B"),
    "phi-4": ("phi-4", "phi 4", "microsoft/phi-4"),
    "deepseek-v3": ("deepseek v3", "DeepSeek-V3", "deepseek-ai/DeepSeek-V3"),
}
# bare sizes: params_b -> forms
SIZES: dict[float, tuple[str, ...]] = {
    7.0: ("7b", "a 7B model", "7B params", "7b model", "7 billion param model"),
    13.0: ("13b", "a 13B model", "13B"),
    70.0: ("70b", "a 70B model", "70B dense model"),
    1.3: ("1.3b", "a 1.3B model"),
}
GPUS: dict[str, tuple[str, ...]] = {
    "h100-80gb": ("h100", "H100", "H100 80GB", "h100 sxm", "H100-80GB", "H100 SXM5"),
    "a100-80gb": ("a100 80gb", "A100-80G", "A100 80GB", "a100 80g", "A100-SXM4-80GB"),
    "a100-40gb": ("a100 40gb", "A100-40GB", "a100-40g"),
    "h200-141gb": ("h200", "H200", "H200 141GB"),
    "l4-24gb": ("l4", "L4"),
    "l40s-48gb": ("l40s", "L40S", "L40S 48GB"),
    "t4-16gb": ("t4", "T4"),
    "rtx4090-24gb": ("4090", "rtx 4090", "RTX4090", "RTX 4090 24GB"),
    "rtx3090-24gb": ("3090", "rtx 3090"),
    "mi300x-192gb": ("mi300x", "MI300X"),
    "b200-180gb": ("b200", "B200"),
}
SERVE_WORDS = ("serve", "serving", "inference for", "deploy", "host", "inference with", "vllm serve",
               "run inference on", "serve up")
TRAIN_WORDS = ("train", "pretrain", "training", "full training of", "pre-train", "pretraining")
FINETUNE_WORDS = ("finetune", "fine-tune", "sft", "full finetune", "fine tuning")
LORA_WORDS = ("lora", "LoRA fine-tune", "lora finetune", "LoRA")
PREFIXES = ("", "", "hey ", "quick q: ", "hi all, ", "question: ", "can we ", "do we have enough to ",
            "@fitcheck ", "sanity check: ", "trying to ", "need to ", "Hi @fitcheck - ",
            "quick sanity check, ", "FYI ", "Q: ", "help: ")
SUFFIXES = ("", "", "?", " - will it fit?", " does that fit", " thx", " pls", " (for a demo next week)",
            ", what do you think?", " - enough memory?", " :)", " - is that doable?",
            " (asking for a friend)", " lmk", " cc alice")
HOW_MANY = (" how many gpus?", ", how many do we need?", " - how many gpus do i need",
            " what's the min number of gpus")
SEPARATORS = (", ", " ", "; ", " / ", " | ", "\n", " - ", ", and ", " with ", ",", "\t", " + ", " // ", ". ")
# numbers that belong to no field: the parser must say it ignored them
STRAY = (("for 3 epochs", "3 epochs"), ("budget is 2 weeks", "2 weeks"),
         ("we have 5 engineers", "5 engineers"), ("ETA 10 days", "10 days"), ("for 2 teams", "2 teams"),
         ("about 30 minutes per run", "30 minutes"), ("dataset is 100 GB", "100 GB"))
CONTEXTS = (2048, 4096, 8192, 16384, 32768, 65536, 131072)
USERS = (1, 2, 4, 8, 16, 32, 50, 64, 100, 128, 256)
COUNTS = (1, 2, 4, 8, 16, 32, 64)
BATCHES = (1, 2, 4, 8, 16, 32)
GLOBAL_BATCHES = (256, 512, 1024, 2048)


@dataclass(frozen=True, slots=True)
class Piece:
    """One slot as written, and the request fields it means."""

    slot: str
    text: str
    fields: dict[str, Any]


@dataclass
class Case:
    text: str
    expected: dict[str, dict[str, Any]]  # slot -> fields
    absent: tuple[str, ...] = ()
    stray: tuple[str, ...] = ()
    task: str = ""
    tags: list[str] = field(default_factory=list)


def _k(n: int) -> str:
    return f"{n // 1024}k"


def context(r: random.Random, n: int) -> str:
    k, K = _k(n), _k(n).upper()
    forms = (f"{k} ctx", f"{K} context", f"ctx {k}", f"context {n}", f"context of {k}",
             f"{n}-token context", f"{n} token context", f"seq len {n}", f"seq {k}", f"seq_len={n}",
             f"max_model_len {n}", f"{k} context window", f"context length: {k}", f"at {k} context",
             f"with a {k} context", f"{k} tokens of context", f"sequence length {n}",
             f"max seq len {k}", f"{k} seq len", f"{k} context length", f"ctx={k}", f"ctx len {n}",
             f"{K} ctx", f"context window of {K}", f"{k} sequence length",
             # second set, added later (also written before running them)
             f"{k} window", f"{n} tokens context", f"context ~{k}", f"{K} tokens context", f"ctx_len={n}",
             f"--max-model-len {n}", f"sequences of {n} tokens", f"at {n} seq length", f"{k}-token context",
             f"{k} ctx window", f"max context {k}", f"seq_length: {n}", f"{K} context size")
    return r.choice(forms)


def users(r: random.Random, n: int) -> tuple[str, str]:
    """(text, field): concurrency words give ``concurrent``; a serving batch gives ``batch``; an
    engine's cap (``--max-num-seqs``) gives ``max_num_seqs``."""
    if n == 1:
        return r.choice(("1 user", "a single user", "one user", "1 concurrent user")), "concurrent"
    forms = (f"{n} users", f"for {n} concurrent", f"{n} concurrent users", f"{n} parallel requests",
             f"{n} concurrent requests", f"concurrency {n}", f"concurrency={n}", f"{n} simultaneous users",
             f"{n} concurrent", f"{n} concurrent sequences", f"{n} reqs in parallel",
             f"max {n} concurrent", f"{n} ppl at once", f"{n} concurrent streams",
             f"{n} concurrent chats", f"{n} active sessions", f"up to {n} users at a time",
             f"{n} users in parallel",
             f"max_concurrency={n}", f"{n} simultaneous requests",
             f"{n} users concurrently",
             f"{n} concurrent clients")
    if r.random() < 0.2:
        return r.choice((f"batch {n}", f"bs={n}", f"batch size {n}", f"batch of {n}")), "batch"
    if r.random() < 0.1:
        return r.choice((f"max_num_seqs {n}", f"--max-num-seqs {n}",
                         f"--max-running-requests {n}")), "max_num_seqs"
    return r.choice(forms), "concurrent"


def micro_batch(r: random.Random, n: int) -> str:
    return r.choice((f"mbs {n}", f"micro batch {n}", f"micro-batch size {n}", f"per-device batch {n}",
                     f"micro_batch_size: {n}", f"per_device_train_batch_size={n}", f"mbs={n}",
                     f"micro bs {n}", f"{n} per gpu", f"micro batch of {n}", f"bs {n} per gpu",
                     f"batch size {n} per device", f"micro-batch={n}", f"mbs:{n}",
                     f"train_micro_batch_size_per_gpu: {n}", f"--micro-batch-size {n}",
                     f"{n} samples per gpu",
                     f"per gpu batch of {n}"))


def global_batch(r: random.Random, n: int) -> str:
    return r.choice((f"gbs {n}", f"global batch {n}", f"global batch size of {n}",
                     f"global_batch_size={n}", f"gbs={n}", f"{n} global batch", f"global bs {n}",
                     f"--global-batch-size {n}", f"effective batch {n}", f"train_batch_size: {n}",
                     f"global batch of {n}"))


def _plural(name: str) -> str:
    """"h100" -> "h100s"; "A100 80GB" and "l40s" stay as they are."""
    low = name.lower()
    return name if low.endswith(("s", "gb", "g")) else name + "s"


def gpus(r: random.Random, gpu: str, count: int | None, serving: bool) -> str:
    name = r.choice(GPUS[gpu])
    if count is None:
        return r.choice((f"on {name}", f"on {_plural(name)}", f"{name} gpus", f"using {_plural(name)}"))
    if count == 1:
        return r.choice((f"on a {name}", f"on one {name}", f"on a single {name}", f"1x {name}",
                         f"on 1 {name}", f"single {name}", f"one {name} gpu"))
    forms = [f"{count}x {name}", f"{count}x{name}", f"{count} {_plural(name)}", f"{count} x {name}",
             f"{name} x{count}", f"{name} x {count}", f"on {count} {name}", f"{count}× {name}",
             f"{count} {name} gpus", f"{count} {name} cards", f"{name} * {count}", f"on {count}x {name}",
             f"{count} GPUs ({name})", f"{count}x{name} cluster", f"{count} x {name} cards"]
    if count == 8:
        forms.append(f"a node of 8 {_plural(name)}")
    return r.choice(forms)


def tensor_parallel(r: random.Random, n: int) -> str:
    return r.choice((f"tp {n}", f"tp={n}", f"TP{n}", f"tensor parallel {n}", f"{n}-way tensor parallel",
                     f"--tensor-parallel-size {n}", f"tp size {n}", f"TP={n}", f"tensor parallelism of {n}",
                     f"tp{n}", f"TP: {n}", f"tensor-parallel {n}", f"--tp {n}", f"tp_size={n}",
                     f"{n}-way TP"))


def pipeline_parallel(r: random.Random, n: int) -> str:
    return r.choice((f"pp {n}", f"pp={n}", f"PP{n}", f"pipeline parallel {n}", f"{n}-way pipeline",
                     f"pipeline parallelism {n}", f"{n} pipeline stages",
                     f"--pipeline-model-parallel-size {n}", f"{n} PP stages", f"pp_size={n}"))


def zero(r: random.Random, stage: int) -> str:
    return r.choice((f"zero-{stage}", f"ZeRO-{stage}", f"zero{stage}", f"ZeRO stage {stage}", f"z{stage}",
                     f"deepspeed zero {stage}", f"zero stage {stage}", f"ds zero-{stage}",
                     f"zero_stage: {stage}",
                     f"ZeRO {stage}", f"zero-{stage} (deepspeed)"))


TRAIN_PRECISION = {"bf16_mixed": ("bf16", "in bf16", "bf16 mixed precision", "mixed precision bf16", "BF16",
                                  "bf16 amp", "mixed_precision: bf16", "--bf16"),
                   "fp16_mixed": ("fp16", "in fp16", "fp16 mixed"),
                   "fp32": ("fp32", "in fp32", "full fp32"),
                   "fp8": ("fp8", "FP8", "in fp8")}
SERVE_QUANT = {"awq": ("awq", "AWQ", "awq 4-bit", "in awq", "awq int4", "4-bit awq", "--quantization awq"),
               "gptq": ("gptq", "GPTQ", "gptq quantized", "gptq 4bit"),
               "int4": ("int4", "4-bit", "4bit", "in 4 bit", "INT4"),
               "int8": ("int8", "8-bit", "8bit", "INT8", "in int8", "quantized to int8"),
               "fp8": ("fp8", "FP8 weights", "in fp8", "fp8 quantized"),
               "bf16": ("bf16", "in bf16", "BF16")}
KV_FORMS = ("fp8 kv cache", "kv cache fp8", "fp8 kv", "kv in fp8", "--kv-cache-dtype fp8",
            "kv_cache_dtype=fp8", "FP8 KV cache", "kv cache in fp8", "kv-cache fp8",
            "--kv-cache-dtype fp8_e5m2",
            "fp8 kvcache", "kv_cache_dtype: fp8")


def lora_rank(r: random.Random, n: int) -> str:
    return r.choice((f"r={n}", f"rank {n}", f"lora r {n}", f"lora rank {n}", f"r {n}", f"rank={n}",
                     f"lora_r: {n}", f"r{n}", f"lora_r={n}", f"r: {n}", f"--lora_r {n}", f"rank-{n} lora",
                     f"LoRA (r={n})"))


def _model(r: random.Random) -> Piece:
    if r.random() < 0.2:
        size = r.choice(list(SIZES))
        return Piece("model", r.choice(SIZES[size]), {"params_b": size})
    model = r.choice(list(MODELS))
    return Piece("model", r.choice(MODELS[model]), {"model": model})


def _gpu_piece(r: random.Random, serving: bool, how_many: bool) -> Piece:
    gpu = r.choice(list(GPUS))
    count = None if how_many else r.choice(COUNTS)
    fields: dict[str, Any] = {"gpu": gpu}
    if count is not None:
        fields["gpu_count"] = count
    text = gpus(r, gpu, count, serving)
    if text.startswith("a node of"):
        fields["nodes"] = 1
    return Piece("gpu", text, fields)


def _serving(r: random.Random) -> tuple[list[Piece], str]:
    pieces = [_model(r)]
    if r.random() < 0.8:
        n = r.choice(CONTEXTS)
        pieces.append(Piece("context", context(r, n), {"seq_len": n}))
    if r.random() < 0.75:
        n = r.choice(USERS)
        text, name = users(r, n)
        pieces.append(Piece("concurrency", text, {name: n}))
    if r.random() < 0.35:
        q = r.choice(list(SERVE_QUANT))
        pieces.append(Piece("quantization", r.choice(SERVE_QUANT[q]), {"quantization": q}))
    if r.random() < 0.2:
        pieces.append(Piece("kv_cache", r.choice(KV_FORMS), {"kv_cache_dtype": "fp8"}))
    if r.random() < 0.2:
        n = r.choice((2, 4, 8))
        pieces.append(Piece("parallelism", tensor_parallel(r, n), {"tp": n}))
    return pieces, "infer"


def _training(r: random.Random, task: str) -> tuple[list[Piece], str]:
    pieces = [_model(r)]
    if r.random() < 0.6:
        n = r.choice(CONTEXTS[:5])
        pieces.append(Piece("context", context(r, n), {"seq_len": n}))
    if r.random() < 0.5:
        n = r.choice(BATCHES)
        pieces.append(Piece("batch", micro_batch(r, n), {"micro_batch": n}))
    if r.random() < 0.25:
        n = r.choice(GLOBAL_BATCHES)
        pieces.append(Piece("global_batch", global_batch(r, n), {"global_batch": n}))
    if r.random() < 0.4:
        stage = r.choice((1, 2, 3))
        pieces.append(Piece("parallelism", zero(r, stage), {"zero_stage": stage}))
    elif r.random() < 0.3:
        n = r.choice((2, 4, 8))
        pieces.append(Piece("parallelism", tensor_parallel(r, n), {"tp": n}))
        if r.random() < 0.5:
            m = r.choice((2, 4))
            pieces.append(Piece("pipeline", pipeline_parallel(r, m), {"pp": m}))
    if r.random() < 0.4:
        p = r.choice(list(TRAIN_PRECISION))
        pieces.append(Piece("precision", r.choice(TRAIN_PRECISION[p]), {"precision": p}))
    if task == "finetune" and r.random() < 0.6:
        n = r.choice((8, 16, 32, 64, 128))
        pieces.append(Piece("lora_rank", lora_rank(r, n), {"lora_rank": n}))
    return pieces, task


_NUMERIC = ("seq_len", "concurrent", "batch", "micro_batch", "global_batch", "gpu_count", "nodes", "tp", "pp",
            "lora_rank", "params_b", "tokens")


def make_case(r: random.Random) -> Case:
    kind = r.random()
    if kind < 0.5:
        pieces, task = _serving(r)
        lead = r.choice(SERVE_WORDS)
    elif kind < 0.8:
        pieces, task = _training(r, "train")
        lead = r.choice(TRAIN_WORDS)
    else:
        pieces, task = _training(r, "finetune")
        lora = any(p.slot == "lora_rank" for p in pieces) or r.random() < 0.5
        lead = r.choice(LORA_WORDS if lora else FINETUNE_WORDS)
    how_many = r.random() < 0.2
    pieces.append(_gpu_piece(r, task == "infer", how_many))
    head, *rest = pieces
    r.shuffle(rest)
    if r.random() < 0.5:
        order = [head, *rest]
    else:
        order = rest[:]
        order.insert(r.randrange(len(order) + 1), head)
    sep = r.choice(SEPARATORS)
    body = sep.join(p.text for p in order)
    text = f"{r.choice(PREFIXES)}{lead} {body}"
    stray: tuple[str, ...] = ()
    if r.random() < 0.1:
        phrase, written = r.choice(STRAY)
        text += f", {phrase}"
        stray = (written,)
    text += r.choice(HOW_MANY) if how_many else r.choice(SUFFIXES)
    expected = {p.slot: p.fields for p in pieces}
    expected["task"] = {"task": task}
    stated = {k for p in pieces for k in p.fields}
    tp_only = "tp" in stated and "gpu_count" not in stated  # serving on TP GPUs: one replica
    absent = tuple(k for k in _NUMERIC if k not in stated and not (tp_only and k == "gpu_count"))
    return Case(text, expected, absent, stray, task)


def generate(n: int, seed: int = 14) -> list[Case]:
    r = random.Random(seed)
    return [make_case(r) for _ in range(n)]


def check(case: Case, parsed: Any) -> dict[str, bool]:
    """Each slot (and 'spurious', 'ignored') -> right? ``parsed`` is a ``service.parser.Parsed``."""
    merged = parsed.merged
    out: dict[str, bool] = {}
    for slot, fields in case.expected.items():
        out[slot] = all(_same(merged.get(k), v) for k, v in fields.items())
    out["spurious"] = not any(k in merged for k in case.absent)
    if case.stray:
        ignored = " | ".join(getattr(parsed, "ignored", ()))
        out["ignored"] = all(s in ignored for s in case.stray)
    return out


def _same(actual: Any, expected: Any) -> bool:
    if isinstance(expected, float) or isinstance(actual, float):
        return isinstance(actual, int | float) and abs(actual - expected) <= 1e-9 * max(1.0, abs(expected))
    return bool(actual == expected)
