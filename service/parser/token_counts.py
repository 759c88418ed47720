"""Readings counted in tokens, once the task is known:

- serving has no training tokens, and nobody trains on a few thousand: "at 4096 tokens",
  "sequences of 2048 tokens" are the context;
- a context is prompt + output: "2k input + 512 output tokens" is 2,560;
- a batch in tokens is sequences: "global batch 4M tokens" at seq 4096 is 1,024 sequences (M and
  k read as 2^20 and 2^10 when that divides evenly, as in "4M tokens of 4096");
- epochs multiply training tokens: "1T tokens, 3 epochs" is 3T;
- steps times a batch in tokens are training tokens: "20k steps at bs=1M tokens" is 2e10.

What cannot be used (an output length with no prompt, a batch in tokens with no context, epochs
with no tokens) is returned as ``_unread`` findings, to be named in the reply.
"""

from __future__ import annotations

import re
from typing import Any

from service.core.job.resolve import DEFAULT_SEQ_LEN
from service.parser.numbers import is_power_of_two
from service.parser.scan import Scan
from service.parser.types import Finding

MAX_CONTEXT = 10_000_000
SHORT_TOKENS = 1_000_000  # fewer training tokens than this is a sequence length


def token_counts(ordered: dict[str, list[Any]], scan: Scan, task: str, notes: list[str]) -> list[Finding]:
    """Apply the readings above to ``ordered`` in place; return what stays unused."""
    _tokens_as_context(ordered, notes, task)
    unused = _prompt_and_output(ordered, scan, notes)
    unused += _steps(ordered, scan, notes)
    unused += _batch_in_tokens(ordered, scan, notes)
    unused += _epochs(ordered, scan, notes)
    return unused


def _steps(ordered: dict[str, list[Any]], scan: Scan, notes: list[str]) -> list[Finding]:
    """Optimizer steps times the tokens each takes, where no token count is said."""
    steps = [s for s in ordered.pop("_steps", []) if isinstance(s, int | float) and s >= 1]
    batch = [b for b in ordered.get("_batch_tokens", []) if isinstance(b, int | float)]
    sequences, length = ordered.get("global_batch", [None])[0], ordered.get("seq_len", [None])[0]
    if not batch and isinstance(sequences, int) and isinstance(length, int):
        batch = [sequences * length]  # "global batch 1024 at seq 4096, 20k steps"
    if not steps:
        return []
    if ordered.get("tokens") or not batch:
        return written_as(scan, "_steps")
    ordered["tokens"] = [steps[0] * batch[0]]
    notes.append(f"{steps[0]:,.0f} steps x {batch[0]:,.0f} tokens per step = "
                 f"{steps[0] * batch[0]:.3g} training tokens")
    return []


def _tokens_as_context(ordered: dict[str, list[Any]], notes: list[str], task: str) -> None:
    tokens = [t for t in ordered.pop("tokens", []) if isinstance(t, int | float)]
    short = tokens if task == "infer" else [t for t in tokens if 0 < t < SHORT_TOKENS]
    if task != "infer" and len(short) < len(tokens):
        ordered["tokens"] = [t for t in tokens if t not in short]
    if not short:
        return
    if ordered.get("seq_len"):  # said, not dropped: the reply lists it as a second value
        ordered["seq_len"] += [int(t) for t in short if t == int(t) and t not in ordered["seq_len"]]
        return
    value = short[0]
    if value == int(value) and 1 <= value <= MAX_CONTEXT:
        if value % 1000 == 0 and is_power_of_two(value // 1000):  # "2k tokens" of context: 2,048
            value = value // 1000 * 1024
        ordered["seq_len"] = [int(value)]
        notes.append(f"{int(value):,} tokens read as the context length")


def _prompt_and_output(ordered: dict[str, list[Any]], scan: Scan, notes: list[str]) -> list[Finding]:
    prompts = [int(p) for p in ordered.pop("_prompt", []) if isinstance(p, int | float)]
    outputs = [int(o) for o in ordered.pop("_output", []) if isinstance(o, int | float)]
    if not prompts:
        return written_as(scan, "_output") if outputs else []
    unread: list[Finding] = []
    if len(prompts) > 1 and outputs:  # "200k prompts ... 2k in / 512 out": the pair's prompt
        found = [f for f in scan.findings if f.field == "_prompt" and isinstance(f.value, int | float)]
        output = next((f for f in scan.findings if f.field == "_output"), None)
        if found and output is not None:
            nearest = min(found, key=lambda f: abs(f.start - output.start))
            prompts = [int(v) for v in (nearest.value,) if isinstance(v, int | float)]
            unread = [Finding("_unread", " ".join(scan.text[f.start:f.end].split()), f.start, f.end)
                      for f in found if f is not nearest]
    if ordered.get("seq_len"):
        ordered["seq_len"] += [p for p in prompts if p not in ordered["seq_len"]]
        return unread + (written_as(scan, "_output") if outputs else [])
    total = prompts[0] + (outputs[0] if outputs else 0)
    ordered["seq_len"] = [total]
    notes.append(f"context = {prompts[0]:,} prompt + {outputs[0]:,} output = {total:,} tokens" if outputs
                 else f"{prompts[0]:,}-token prompts read as the context length (add the output length)")
    return unread


def _batch_in_tokens(ordered: dict[str, list[Any]], scan: Scan, notes: list[str]) -> list[Finding]:
    batches = ordered.pop("_batch_tokens", [])
    seq = ordered.get("seq_len")
    if not batches:
        return []
    if ordered.get("global_batch") or (seq and not isinstance(seq[0], int)):
        return written_as(scan, "_batch_tokens")
    length = seq[0] if seq else DEFAULT_SEQ_LEN  # the length the job will be sized at
    total = batches[0]
    for binary in (total * 1.048576, total * 1.024):  # "4M tokens" at 4096 = 1,024 x 4096 = 4 x 2^20
        if abs(binary / length - round(binary / length)) < 1e-6:
            total = binary
            break
    sequences = max(1, round(total / length))
    ordered["global_batch"] = [sequences]
    notes.append(f"global batch {total:,.0f} tokens / {length:,}"
                 + ("" if seq else " (the default sequence length; say yours)")
                 + f" = {sequences:,} sequences")
    return []


# a token count said to be the whole run's: "1.2B tokens total", "2B tokens in total", "a total of"
_TOTAL_TOKENS = re.compile(r"\btokens?\s+(?:in\s+)?total\b"
                           r"|\btotal\s+(?:of\s+)?(?:~|about\s+)?\d[\d.,]*\s*[kmbt]?\s*tokens?"
                           r"|\b(?:total|overall)\s+tokens?\b|\btokens?\s+(?:overall|all\s+epochs)\b")


def _epochs(ordered: dict[str, list[Any]], scan: Scan, notes: list[str]) -> list[Finding]:
    counts = ordered.pop("_epochs", [])
    tokens = ordered.get("tokens")
    if not counts:
        return []
    if tokens and isinstance(counts[0], int) and counts[0] > 1:
        said = [t for t in tokens if isinstance(t, int | float)]
        total = next((t for t in said if any(t == u * counts[0] for u in said)), None)
        if total is not None:  # "900M tokens total (300M-token dataset x 3 epochs)"
            ordered["tokens"] = [total]
            notes.append(f"{total:.3g} tokens: the stated total of {counts[0]} epochs")
            return []
        if _TOTAL_TOKENS.search(scan.low):  # "1.2B tokens total (3 epochs of 400M)"
            notes.append(f"{tokens[0]:.3g} tokens: the stated total of {counts[0]} epochs")
            return []
        ordered["tokens"] = [t * counts[0] if isinstance(t, int | float) else t for t in tokens]
        notes.append(f"{tokens[0]:.3g} tokens x {counts[0]} epochs")
        return []
    return written_as(scan, "_epochs")


def written_as(scan: Scan, field: str) -> list[Finding]:
    """The first finding of ``field`` as an ``_unread`` finding with the words as written."""
    for f in scan.findings:
        if f.field == field:
            return [Finding("_unread", " ".join(scan.text[f.start:f.end].split()), f.start, f.end)]
    return []
