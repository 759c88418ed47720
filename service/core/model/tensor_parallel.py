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


def serving_tp_sizes(arch: Architecture, gpus: int, limit: int) -> list[int]:
    """The TP sizes of at most ``limit`` that divide ``gpus`` and that vLLM accepts, largest
    first (1 always is one)."""
    return [d for d in range(min(gpus, limit), 0, -1) if not gpus % d and serving_tp_ok(arch, d)]


def largest_serving_tp(arch: Architecture, gpus: int, limit: int) -> int:
    return serving_tp_sizes(arch, gpus, limit)[0]


def expert_rank_tp(gpus: int, pp: int, ep: int) -> int:
    """Serving with a stated EP and no TP: each of the ep attention ranks takes an even share
    of the GPUs as its TP (at least 1)."""
    return max(1, gpus // (pp * ep))
