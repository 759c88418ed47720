"""Questions for a limit rather than a verdict: "max context i can serve at", "longest seq len
that fits", "biggest micro batch on one a100": which field's largest value is asked.

Serving: the longest context comes from the KV budget (budget per GPU / KV bytes per token per
GPU, shared by the stated sequences). Training and fine-tuning: the largest power of two (seq
len or micro-batch) that the planner still fits on the stated GPUs, found by doubling.
"""

from __future__ import annotations

import re
from typing import Any

_CONTEXT = re.compile(
    r"\b(?:max(?:imum|imal)?|longest|biggest|largest|highest|most)\s+(?:possible\s+|usable\s+)?"
    r"(?:context|ctx|seq(?:uence)?(?:[\s_\-]*len(?:gth)?)?|prompts?|input)(?:\s+(?:length|len|window|size))?\b"
    r"|\bhow\s+(?:much\s+|long\s+(?:(?:of\s+)?an?\s+)?|big\s+(?:of\s+)?an?\s+)(?:context|ctx|seq(?:uence)?|prompt)s?\b"
    r"|\bhow\s+many\s+tokens\s+(?:of\s+context|can|fit|will|would)\b"
    # "how long can the context go", "what context length can I get", "how long can the prompt be"
    r"|\bhow\s+(?:long|far|big)\s+(?:can|could|will|would)\s+(?:the\s+|my\s+|a\s+)?"
    r"(?:context|ctx|seq(?:uence)?|prompts?|input)\b"
    r"|\bwhat\s+(?:context|ctx|seq(?:uence)?)(?:\s+(?:length|len|window|size))?\s+(?:can|could|will|would|do)\b")
_BATCH = re.compile(
    r"\b(?:max(?:imum|imal)?|biggest|largest|highest)\s+(?:possible\s+)?(?:micro[\s\-_]*)?"
    r"(?:batch|bs|bsz|mbs)(?:[\s_\-]*size)?\b|\bhow\s+(?:big|large)\s+(?:a\s+|of\s+a\s+)?"
    r"(?:micro[\s\-_]*)?batch"
    # "what mbs can i push", "how high can the batch size go", a bare "mbs?" as the question
    r"|\bwhat\s+(?:micro[\s\-_]*)?(?:batch(?:[\s_\-]*size)?|bs|bsz|mbs)\s+(?:can|could|should|will"
    r"|would|do|fits?)\b|\bhow\s+(?:high|far|big|large)\s+can\s+(?:the\s+|my\s+|our\s+)?"
    r"(?:micro[\s\-_]*)?(?:batch(?:[\s_\-]*size)?|bs|bsz|mbs)\b"
    r"|(?:^|[.,;!?]\s*)(?:and\s+)?(?:micro[\s\-_]*batch|mbs|bs)\s*\?")



# "biggest model I can LoRA on a 3090", "largest llm that fits on 4x A6000"
_MODEL = re.compile(r"\b(?:biggest|largest|max(?:imum)?)\s+(?:size(?:d)?\s+)?(?:model|llm|network)s?\b"
                    r"|\bhow\s+(?:big|large)\s+(?:of\s+)?an?\s+(?:model|llm)\b")


def asked_model(low: str, fields: dict[str, Any]) -> bool:
    """Whether the largest model is asked for (no model, size or architecture named)."""
    return bool(_MODEL.search(low)) and not fields.keys() & {"model", "params_b", "arch"}


def asked(low: str, fields: dict[str, Any]) -> str | None:
    """The field whose largest value is asked for ("seq_len" or "micro_batch"), unless stated."""
    if _CONTEXT.search(low) and "seq_len" not in fields:
        return "seq_len"
    if _BATCH.search(low) and not ({"micro_batch", "batch", "concurrent"} & fields.keys()):
        return "micro_batch"
    return None
