"""Field-level accuracy of the chat parser and what a question costs.

Run: python3 bench/parser_accuracy.py. Prints, for the hand-written corpus
(``tests/data/parser_corpus.jsonl``): intent accuracy, accuracy per field and overall, the
questions with a wrong item; for the generated set (``tests/parser_generator.py``, 3,000 questions):
accuracy per slot; then CPU time per parse (``time.process_time`` over many parses: a typical
corpus question, a 4 KB pasted config with prose, 4 KB of distinct words), the whole ``ask`` with
the engine, and the slowest parse of adversarial 10,000-character texts.
"""

from __future__ import annotations

import random
import string
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ask_support import ask
from parser_corpus import check, load
from parser_generator import check as check_generated
from parser_generator import generate

from service.parser import parse

GENERATED = 3000
ADVERSARIAL = ("1" * 10_000, "a" * 10_000, "llama 3 8b " * 909, "8x h100 " * 1250,
               "4 nodes of 8xH100 " * 555, "48 layers, d_model 6144, " * 400, "<@U1> " * 1666,
               "zero-3 or zero-2 vs " * 500, "{" * 5000 + "}" * 5000, "1.5T tokens " * 833,
               "32k ctx 8 users " * 625, "seq 4096, bs 8, tp 2, " * 450)
PASTE = """hey team, does this axolotl run fit on our 8x A100 80GB box or do we need the H100s? we ran
it with sequence_len 4096 last week and want 8192 now, plus the vllm command for serving after.
base_model: meta-llama/Meta-Llama-3.1-70B-Instruct
load_in_4bit: true
adapter: qlora
sequence_len: 8192
sample_packing: true
lora_r: 64
lora_alpha: 128
lora_dropout: 0.05
gradient_accumulation_steps: 8
micro_batch_size: 2
num_epochs: 3
optimizer: paged_adamw_8bit
learning_rate: 0.0002
bf16: auto
gradient_checkpointing: true
flash_attention: true
warmup_steps: 10
deepspeed: deepspeed_configs/zero3_bf16.json
vllm serve ./merged --tensor-parallel-size 4 --max-model-len 32768 --max-num-seqs 64 \\
  --gpu-memory-utilization 0.92 --kv-cache-dtype fp8 --port 8000
we expect about 64 concurrent users at peak, prompts around 6k tokens. if it doesn't fit we can
get 2 nodes of 8xH100 for two weeks at $2.5/gpu-hour; procurement needs the estimate. thanks!
"""


def _cpu_per_call(fn: Callable[[], object], repeat: int) -> float:
    """CPU seconds per call (``process_time``: what this process burned, not wall time)."""
    start = time.process_time()
    for _ in range(repeat):
        fn()
    return (time.process_time() - start) / repeat


def corpus_accuracy() -> None:
    cases = load()
    right: dict[str, int] = defaultdict(int)
    total: dict[str, int] = defaultdict(int)
    wrong: list[str] = []
    for case in cases:
        result = check(case)
        for item, ok in result.items():
            key = "absent" if item.startswith("absent:") else item
            total[key] += 1
            right[key] += ok
        if not all(result.values()):
            wrong.append(f"  #{case['id']} {case['text'][:70]!r}: "
                         + ", ".join(k for k, ok in result.items() if not ok))
    items, good = sum(total.values()), sum(right.values())
    fields = items - total["intent"]
    print(f"corpus: {len(cases)} questions, {items} checked items")
    intents = f"{right['intent']}/{total['intent']}"
    print(f"intent accuracy: {right['intent'] / total['intent']:.1%} ({intents})")
    field_right = good - right["intent"]
    print(f"field-level accuracy: {field_right / fields:.1%} ({field_right}/{fields})")
    print(f"overall (intent + fields): {good / items:.1%}\n")
    _table(right, total)
    print("\nwrong:" if wrong else "\nwrong: none")
    for line in wrong:
        print(line)


def generated_accuracy() -> None:
    right: dict[str, int] = defaultdict(int)
    total: dict[str, int] = defaultdict(int)
    for case in generate(GENERATED):
        for slot, ok in check_generated(case, parse(case.text)).items():
            total[slot] += 1
            right[slot] += ok
    items, good = sum(total.values()), sum(right.values())
    print(f"\ngenerated: {GENERATED} questions, {items} checked slots, accuracy {good / items:.1%}\n")
    _table(right, total)


def _table(right: dict[str, int], total: dict[str, int]) -> None:
    print(f"{'item':<22}{'right':>7}{'total':>7}{'accuracy':>10}")
    for key in sorted(total, key=lambda k: (-total[k], k)):
        print(f"{key:<22}{right[key]:>7}{total[key]:>7}{right[key] / total[key]:>10.1%}")


def timing() -> None:
    cases = load()
    for case in cases:  # warm caches (presets, catalog, regexes)
        ask(case["text"], case.get("previous"))
    rounds = 20
    start = time.process_time()
    for _ in range(rounds):
        for case in cases:
            parse(case["text"], case.get("previous"))
    typical = (time.process_time() - start) / (rounds * len(cases))
    paste = (PASTE * 2)[:4096]
    rng = random.Random(14)
    words = " ".join("".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 9)))
                     for _ in range(800))[:4096]
    print(f"\nCPU per parse (process_time): corpus question {typical * 1e6:,.0f} us, "
          f"4 KB paste {_cpu_per_call(lambda: parse(paste), 50) * 1e3:.1f} ms, "
          f"4 KB of distinct words {_cpu_per_call(lambda: parse(words), 50) * 1e3:.1f} ms")
    ask_ms = _cpu_per_call(lambda: [ask(c["text"], c.get("previous")) for c in cases], 1) / len(cases) * 1e3
    print(f"CPU per ask (parse + engine + planner + reply): {ask_ms:.1f} ms")
    worst = max(_cpu_per_call(lambda t=t: parse(t[:10_000]), 3) for t in ADVERSARIAL)
    print(f"slowest parse of {len(ADVERSARIAL)} adversarial 10,000-char texts: {worst * 1e3:,.1f} ms")


if __name__ == "__main__":
    corpus_accuracy()
    generated_accuracy()
    timing()
