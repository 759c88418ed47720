"""What a number bound to each attribute may look like: the suffixes it accepts ("32k" for a
context, "8x" for a GPU count, "40%" for an MFU), the range in which the binding is plausible and
the values people usually mean there. Outside the range a binding is unlikely but still possible:
"seq -1" must reach the request's range check and be refused there, by name.

Attributes are request fields, ``arch.*`` for a custom architecture, ``_``-prefixed readings that
other fields use (``_batch``: micro-batch for training, decoded batch for serving; ``_per_gpu``;
``_grad_accum``; ``_epochs``; ``_dp``; ``_prompt`` and ``_output``: a context is prompt + output;
``_users_total``: daily or total users, not how many at once), a ``~`` variant of an attribute that
only some suffixes reach ("4k sequences" is a length, "100 sequences" a count), ``unused.*`` for
settings that do not change memory (learning rate, seed, port: understood, not reported), and
``unsupported.*`` for quantities fitcheck cannot use (a time budget, GPU-hours, throughput): named
in the reply."""

from __future__ import annotations

from dataclasses import dataclass

# Which number suffixes each attribute accepts ("" = plain number; "word" = "one", "a single").
PLAIN = frozenset({"", "word"})
LENGTH = frozenset({"", "k", "m"})
AMOUNT = frozenset({"", "k", "m", "b", "t"})
COUNT_X = frozenset({"", "word", "x"})
SHARE = frozenset({"", "%"})
MONEY = frozenset({"$"})
ANY = frozenset({"", "k", "m", "b", "t", "x", "%", "gb", "tb", "mb", "word"})


@dataclass(frozen=True, slots=True)
class Attribute:
    """What a quantity bound to this attribute may look like: suffixes and a plausible range
    (outside it the binding is unlikely but still possible: "seq -1" must reach the range check)."""

    name: str
    units: frozenset[str]
    low: float = 1
    high: float = 1e9
    usual: tuple[float, float] | None = None  # values people usually mean here: a small bonus


ATTRIBUTES: dict[str, Attribute] = {a.name: a for a in (
    Attribute("seq_len", LENGTH, 64, 10_000_000, (256, 2_097_152)),
    Attribute("seq_len~k", frozenset({"k"}), 64, 10_000_000, (256, 2_097_152)),  # "4k sequences"
    Attribute("_prompt", LENGTH, 16, 10_000_000, (128, 2_097_152)),
    Attribute("concurrent", PLAIN | {"k"}, 1, 1_000_000, (1, 10_000)),
    Attribute("max_num_seqs", PLAIN, 1, 1_000_000, (1, 4096)),
    Attribute("_users", PLAIN | {"k"}, 1, 1_000_000, (1, 10_000)),  # at once, unless said otherwise
    Attribute("_users_total", PLAIN | {"k", "m"}, 1, 10_000_000_000, (10, 10_000_000)),
    Attribute("_batch", PLAIN, 1, 100_000, (1, 1024)),
    Attribute("_per_gpu", PLAIN, 1, 4096, (1, 256)),
    Attribute("micro_batch", PLAIN, 1, 100_000, (1, 256)),
    Attribute("global_batch", PLAIN | {"k"}, 1, 100_000_000, (8, 65_536)),
    Attribute("_grad_accum", PLAIN, 1, 10_000),
    Attribute("gpu_count", COUNT_X, 1, 1_000_000, (1, 2048)),
    Attribute("gpus_per_node", COUNT_X, 1, 1024),
    Attribute("nodes", COUNT_X, 1, 100_000),
    Attribute("tp", COUNT_X, 1, 1024, (1, 64)),
    Attribute("virtual_stages", PLAIN, 2, 128, (2, 16)),
    Attribute("_layers_per_virtual_stage", PLAIN, 1, 1024, (1, 32)),
    Attribute("shard_group", COUNT_X, 2, 1_000_000, (2, 1024)),
    Attribute("pp", COUNT_X, 1, 1024, (1, 128)),
    Attribute("cp", COUNT_X, 1, 1024),
    Attribute("ep", COUNT_X, 1, 4096),
    Attribute("_dp", COUNT_X, 1, 100_000),
    Attribute("lora_rank", PLAIN, 1, 65_536, (1, 1024)),
    Attribute("lora_slots", PLAIN, 1, 1024, (1, 128)),
    Attribute("tokens", AMOUNT, 1e6, 1e16),
    Attribute("mfu", SHARE, 0.01, 100),
    Attribute("_tflops", PLAIN, 1, 20_000, (20, 5000)),  # achieved TFLOP/s per GPU
    Attribute("memory_headroom", SHARE, 0.05, 100),
    Attribute("price_per_gpu_hour", MONEY, 0.01, 1000),
    Attribute("_epochs", PLAIN, 1, 10_000),
    Attribute("_output", LENGTH, 1, 10_000_000),
    Attribute("_batch_tokens", AMOUNT, 1000, 1e9),
    Attribute("arch.layers", PLAIN, 1, 1000),
    Attribute("arch.hidden", PLAIN, 64, 1_000_000),
    Attribute("arch.heads", PLAIN, 1, 1024),
    Attribute("arch.kv_heads", PLAIN, 1, 1024),
    Attribute("arch.ffn", PLAIN, 64, 10_000_000),
    Attribute("arch.vocab", PLAIN | {"k"}, 100, 10_000_000),
    Attribute("arch.experts", PLAIN, 2, 100_000),
    Attribute("arch.top_k", PLAIN, 1, 64),
    Attribute("arch.expert_ffn", PLAIN, 16, 10_000_000),
    Attribute("unused.setting", ANY | {"$"}, -1e18, 1e18),
    Attribute("unsupported.time", PLAIN | {"k"}, 0, 1e9),
    Attribute("unsupported.gpu_hours", PLAIN | {"k", "m"}, 0, 1e12),
    Attribute("unsupported.throughput", PLAIN | {"k"}, 0, 1e9),
    Attribute("_steps", PLAIN | {"k"}, 0, 1e9),
    Attribute("unsupported.host_memory", frozenset({"gb", "tb"}), 0, 1e6),
    Attribute("unsupported.budget", MONEY | {"k", "m"}, 0, 1e12),
)}


FILLERS = frozenset({
    "of", "is", "at", "to", "about", "around", "approx", "approximately", "roughly", "up", "upto", "max",
    "maximum", "a", "an", "the", "way", "like", "under", "over", "min", "minimum", "total", "just", "only",
    "exactly", "least", "most", "set", "be", "are", "x", "per", "some", "say", "maybe", "ish", "nominal",
    "our", "its", "peak", "in", "than",
})
# Words that may stand between a number and its noun without breaking the link ("8 concurrent
# active users" is one thing; "8 gpus and 4 users" is two).
ADJECTIVES = frozenset({
    "concurrent", "simultaneous", "parallel", "active", "more", "total", "separate", "different",
    "identical", "big", "large", "small", "long", "short", "typical", "average", "avg", "live", "real",
    "heavy", "light", "extra", "additional", "new", "nvidia", "beefy", "idle", "spare", "physical",
    "training", "trainer", "worker", "compute", "gpu", "a100", "h100", "dgx", "hgx",
})
# Words that end a phrase: a number is never bound across them ("8 gpus and 4 users").
STOPS = frozenset({
    "and", "or", "but", "on", "for", "with", "at", "in", "to", "from", "per", "of", "then", "plus", "also",
    "while", "vs", "versus", "via", "using", "into", "than", "instead", "each", "every", "across", "over",
})
