"""Sanity limits on the sizes a request may ask for, each with the reason for its number.

These are the one place the API's size limits live: the JSON body, the permalink's query and
the home form all take them from here (``estimate_schemas``), and a 422 names the field, the
accepted range and the reason. A limit sits far past any real job, so it only stops typos and
absurd sizes (seq_len 1e12, a micro-batch of 100,000 sequences) before they become 8.7e18 bytes
per GPU. The engine keeps its own ranges (``service.core.job.request``); the API accepts the
overlap of both, so a value the API lets through is never refused by the engine.
"""

from __future__ import annotations

from dataclasses import dataclass

from service.core.job.request import FLOAT_RANGES, INT_RANGES
from service.permalink import short_float


@dataclass(frozen=True, slots=True)
class LongestContext:
    """The longest context any built-in model supports, and where that figure comes from."""

    model: str  # a preset id
    tokens: int
    source: str


# The presets hold architectures, not context windows, so the longest one is named here with
# its source; tests/test_size_limits.py checks that the preset exists.
LONGEST_CONTEXT = LongestContext(
    "llama-4-scout", 10_485_760,
    "max_position_embeddings of meta-llama/Llama-4-Scout-17B-16E's config.json (10M tokens)")
CONTEXT_FACTOR = 8


@dataclass(frozen=True, slots=True)
class SizeLimit:
    low: float
    high: float
    reason: str


MAX_SEQ_LEN = CONTEXT_FACTOR * LONGEST_CONTEXT.tokens

SERVED = ("sequences served together: a serving replica holds hundreds and a thousand-GPU fleet "
          "tens of thousands; a million is far past any deployment")

SANITY: dict[str, SizeLimit] = {
    "seq_len": SizeLimit(1, MAX_SEQ_LEN, (
        f"{CONTEXT_FACTOR}x the longest context of any built-in model: {LONGEST_CONTEXT.model}, "
        f"{LONGEST_CONTEXT.tokens:,} tokens")),
    "micro_batch": SizeLimit(1, 65_536, (
        "sequences in one GPU's forward and backward pass: real ones are 1-64 in training and a "
        "few hundred in serving; 65,536 is a thousand times past them")),
    "global_batch": SizeLimit(1, 16_777_216, (
        "sequences per optimizer step: the largest published runs step on about 16M tokens, a "
        "few thousand sequences; 2^24 sequences is a thousand times past them")),
    "batch": SizeLimit(1, 1_000_000, SERVED),
    "concurrent": SizeLimit(1, 1_000_000, SERVED),
    "gpu_count": SizeLimit(1, 1_000_000, (
        "the largest GPU clusters built hold a few hundred thousand GPUs; a million is several "
        "times past them")),
    "nodes": SizeLimit(1, 100_000, (
        "100,000 servers of 8 GPUs is 800,000 GPUs, several times the largest cluster built")),
    "gpus_per_node": SizeLimit(1, 1024, (
        "GPUs in one NVLink domain: 72 in the largest sold (GB200 NVL72), 576 announced; 1,024 "
        "is past both")),
    "shard_group": SizeLimit(1, 1_000_000, "at most every GPU of the largest accepted job"),
    "tp": SizeLimit(1, 1024, "tensor parallelism divides attention heads: no model has more "
                    "than a few hundred; 1,024 is past them all"),
    "pp": SizeLimit(1, 1024, "pipeline parallelism divides layers: no model has more than a "
                    "few hundred; 1,024 is past them all"),
    "cp": SizeLimit(1, 1024, "context parallelism splits one sequence: published runs use up "
                    "to a few dozen ranks; 1,024 is past them all"),
    "ep": SizeLimit(1, 4096, "expert parallelism divides experts: the most any model has is a "
                    "few hundred per layer; 4,096 is past them all"),
    "lora_rank": SizeLimit(1, 65_536, "a rank past the hidden size adds nothing, and no model's "
                           "hidden size reaches 65,536"),
    "max_num_seqs": SizeLimit(1, 1_000_000, "vLLM's --max-num-seqs defaults to 256 to 1,024; a "
                              "million running sequences is far past any server"),
    "lora_slots": SizeLimit(1, 1024, "vLLM serves a handful to a few dozen adapters at once "
                            "(--max-loras); 1,024 slots of rank 16 would outweigh a 70B model"),
    "tokens": SizeLimit(1.0, 1e16, "the largest published training runs use a few tens of "
                        "trillions of tokens; 1e16 is hundreds of times past them"),
    "params_b": SizeLimit(0.0001, 100_000.0, "the largest published models have about a "
                          "trillion parameters; 100,000 B (100T) is a hundred times past them"),
}


def _overlap(name: str, own: SizeLimit) -> SizeLimit:
    """The sanity limit within the engine's range, saying so when the engine's is tighter."""
    engine = INT_RANGES.get(name) or FLOAT_RANGES.get(name)
    if engine is None:
        return own
    low, high = max(own.low, engine[0]), min(own.high, engine[1])
    reason = own.reason
    if high < own.high:
        reason += f"; the engine itself accepts up to {_number(high if name in FLOAT_RANGES else int(high))}"
    return SizeLimit(low, high, reason)


def _number(value: float) -> str:
    """Integers as 1,000,000; other numbers as 0.0001, past a billion as 1e16."""
    if isinstance(value, int):
        return f"{value:,}"
    if value >= 1e9:
        return short_float(float(value))
    return f"{int(value):,}" if value.is_integer() else f"{value:g}"


LIMITS: dict[str, SizeLimit] = {name: _overlap(name, own) for name, own in SANITY.items()}
# One GPU's pass (seq_len x micro_batch) holds at most the longest accepted sequence's tokens.
TOKENS_PER_PASS = int(LIMITS["seq_len"].high)


def int_range(name: str) -> tuple[int, int] | None:
    """The accepted integer range of a size field (None: not an integer size field)."""
    if name in LIMITS and name in INT_RANGES:
        return int(LIMITS[name].low), int(LIMITS[name].high)
    return INT_RANGES.get(name)


def float_range(name: str) -> tuple[float, float] | None:
    if name in LIMITS and name in FLOAT_RANGES:
        return LIMITS[name].low, LIMITS[name].high
    return FLOAT_RANGES.get(name)


def accepted_range(name: str) -> str | None:
    """'an integer 1..65,536: the reason', or None for a field without a numeric range."""
    reason = f": {LIMITS[name].reason}" if name in LIMITS else ""
    ints = int_range(name)
    if ints is not None:
        return f"an integer {_number(ints[0])}..{_number(ints[1])}{reason}"
    floats = float_range(name)
    if floats is not None:
        return f"a number {_number(floats[0])}..{_number(floats[1])}{reason}"
    return None


def tokens_per_pass_problem(seq_len: int | None, micro_batch: int | None) -> str | None:
    """Tokens one GPU holds in a pass (seq_len x micro_batch) past the longest accepted sequence:
    what is wrong, or None."""
    if seq_len is None or micro_batch is None or seq_len * micro_batch <= TOKENS_PER_PASS:
        return None
    return (f"{micro_batch:,} sequences of {seq_len:,} tokens is {seq_len * micro_batch:,} tokens "
            f"in one GPU's pass; at most {TOKENS_PER_PASS:,} (the longest accepted sequence)")
