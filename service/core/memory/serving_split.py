"""How a tensor-parallel serving engine splits weights, heads and the KV cache over GPUs.

vLLM ``QKVParallelLinear``: query heads must divide by tp; KV heads are split when there are
at least tp of them (kv_heads % tp == 0), else each GPU keeps one KV head, replicated tp /
kv_heads times (tp % kv_heads == 0). MLA caches one latent per token, not split by heads.
"""

from __future__ import annotations

from dataclasses import dataclass

from service.core.job.spec import Job
from service.core.memory.serving import (
    ServingBudget,
    forward_workspace_bytes,
    kv_bytes_per_token,
    serving_weight_bytes,
)
from service.core.model.architecture import Architecture


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


@dataclass(frozen=True, slots=True)
class ServingShare:
    """One GPU's part of a serving job on tp x pp GPUs."""

    weights: int
    kv_per_sequence: int  # this GPU's share of one sequence's KV cache at the context length
    workspace: int  # forward-pass peak (one layer alive) + sampling logits
    chunk: int  # tokens in one forward pass

    def kv_total(self, sequences: int) -> int:
        return self.kv_per_sequence * sequences


def serving_share(job: Job, tp: int, pp: int, budget: ServingBudget) -> ServingShare:
    """Weights / (tp x pp); KV cache per sequence x ``kv_share`` / pp; the workspace of a
    forward pass over min(max_batched_tokens, context x sequences) tokens."""
    arch = job.arch
    weights = round(serving_weight_bytes(arch, job.quantization) * job.param_scale / (tp * pp))
    per_seq = kv_bytes_per_token(arch, job.kv_cache_dtype, job.seq_len) * job.seq_len
    chunk = min(budget.max_batched_tokens, job.seq_len * job.batch)
    return ServingShare(weights, round(per_seq * kv_share(arch, tp) / pp),
                        forward_workspace_bytes(arch, chunk, job.batch, tp), chunk)
