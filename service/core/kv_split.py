"""How a tensor-parallel serving engine splits attention heads and the KV cache over GPUs.

vLLM ``QKVParallelLinear``: query heads must divide by tp; KV heads are split when there are
at least tp of them (kv_heads % tp == 0), else each GPU keeps one KV head, replicated tp /
kv_heads times (tp % kv_heads == 0). MLA caches one latent per token, not split by heads.
"""

from __future__ import annotations

from service.core.architecture import Architecture


def kv_share(arch: Architecture, tp: int) -> float:
    """Share of one sequence's KV cache that each tensor-parallel GPU holds."""
    if arch.mla is not None:
        return 1.0
    kv = arch.kv_heads_resolved
    return max(1, kv // tp) / kv


def serving_tp_ok(arch: Architecture, tp: int) -> bool:
    """vLLM's rule: heads % tp == 0, and kv_heads % tp == 0 or tp % kv_heads == 0."""
    if arch.heads % tp:
        return False
    if arch.mla is not None:
        return True
    kv = arch.kv_heads_resolved
    return kv % tp == 0 if kv >= tp else tp % kv == 0
