"""Which tensor-parallel sizes a serving engine accepts for an architecture (vLLM's checks in
``ModelConfig.verify_with_parallel_config`` and the attention layers): the planner tries only
these, and a request that names GPUs but no TP size gets the largest of them."""

from __future__ import annotations

from service.core.model.architecture import Architecture


def serving_tp_ok(arch: Architecture, tp: int) -> bool:
    """vLLM's rule: heads % tp == 0, and kv_heads % tp == 0 or tp % kv_heads == 0; a hybrid's
    linear-attention key heads % tp == 0."""
    if arch.heads % tp:
        return False
    if arch.linear_attention is not None and arch.linear_attention.key_heads % tp:
        return False
    if arch.mla is not None:
        return True
    kv = arch.kv_heads_resolved
    return kv % tp == 0 if kv >= tp else tp % kv == 0


def largest_serving_tp(arch: Architecture, gpus: int, limit: int) -> int:
    """The largest TP size of at most ``limit`` that divides ``gpus`` and that vLLM accepts
    (1 always does)."""
    return max((d for d in range(1, min(gpus, limit) + 1) if not gpus % d and serving_tp_ok(arch, d)),
               default=1)
