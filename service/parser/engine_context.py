"""A pasted serving command with no context length: the engine takes the model's own.

``vllm serve MODEL`` without ``--max-model-len`` (and SGLang without ``--context-length``, and
vLLM's ``LLM(...)`` without ``max_model_len``) serves the model's whole trained context, its
config's ``max_position_embeddings`` (vLLM ``ModelConfig.max_model_len`` from
``_get_and_verify_max_len``; SGLang ``ModelConfig.context_len``): "Serves ... at 4,096" would
answer a question about a server that is asked to hold 131,072 tokens per sequence.
"""

from __future__ import annotations

import re
from typing import Any

from service.core.model.presets import lookup_preset

# a command as pasted: a repository id and flags after "vllm serve" or with SGLang's launcher (not
# "can we vllm serve gemma on 8 L40S", which names the engine in prose), or LLM(model="org/...")
_COMMAND = re.compile(r"\bvllm\s+serve\s+[\w.\-]+/[\w.\-]+\s+--[a-z]|\bsglang\.launch_server\b[^\n]*--model"
                      r"|\bllm\(\s*(?:model\s*=\s*)?[\"'][\w.\-]+/")


def engine_context(low: str, merged: dict[str, Any], notes: list[str]) -> int | None:
    """The context a pasted command serves at when it names none (None: not such a command,
    a context is known, or the model's own context is not)."""
    if merged.get("task") != "infer" or "seq_len" in merged or not _COMMAND.search(low):
        return None
    preset = lookup_preset(str(merged.get("model", "")))
    if preset is None or not preset.max_context:
        return None
    engine = "SGLang" if merged.get("framework") == "sglang" else "vLLM"
    notes.append(f"no context length in the command: {engine} serves the model's own, "
                 f"{preset.max_context:,} tokens (its config's max_position_embeddings)")
    return preset.max_context
