"""Temporary buffers and framework overhead: memory that no parameter or saved tensor explains.

All figures here are stated assumptions, overridable per request (``cuda_context_bytes``,
``allocator_reserve``, ``overhead_model``).
"""

from __future__ import annotations

from service.core.job.spec import Job
from service.core.memory.activations import ITEMIZED_PROFILES, ActivationBreakdown
from service.core.memory.formula import Component, component
from service.core.memory.precision import compute_dtype_bytes, gradient_bytes_per_param
from service.core.model.params import layer_params
from service.core.units import MiB

CUDA_CONTEXT_BYTES = 512 * MiB  # CUDA context + cuBLAS workspaces (CUDA 12 lazy loading), assumed
NCCL_BYTES = 512 * MiB  # NCCL communicator buffers when more than one GPU
ALLOCATOR_RESERVE = 0.05  # PyTorch caching allocator: reserved over allocated
FLAT_OVERHEAD = 0.10  # the S1 seed's flat 10%
DDP_BUCKET_BYTES = 2 * 25 * MiB  # DDP / ZeRO-1/2 gradient buckets (two 25 MiB buckets in flight)


def loss_peak_bytes(job: Job) -> float:
    """Logits at the start of backward: the returned 16-bit logits (HF keeps them in the
    output), the fp32 gradient of the log-softmax and the fp32 gradient of the logits:
    tokens x V/tp x (e + 4 + 4)."""
    e = compute_dtype_bytes(job.precision)
    tokens = job.tokens_per_micro_batch / job.parallel.cp
    return tokens * job.arch.vocab / job.parallel.tp * (e + 8)


def layer_backward_bytes(job: Job, acts: ActivationBreakdown) -> float:
    """One layer's backward: its recomputed activations (full recompute) plus gradient
    buffers of its widest tensors, ~2 x e x max(ffn, q + 2kv) per token / tp."""
    arch, e = job.arch, compute_dtype_bytes(job.precision)
    ffn = arch.ffn if arch.moe is None else max(arch.ffn, arch.moe.experts_per_token
                                                * arch.moe.expert_ffn)
    widest = max(2 * ffn, arch.q_width + 2 * arch.kv_width, arch.hidden)
    tokens = job.tokens_per_micro_batch / job.parallel.cp
    return acts.working_set_bytes + 2 * e * widest * tokens / job.parallel.tp


def gathered_param_bytes(job: Job) -> float:
    """ZeRO-3 / FSDP: the all-gathered layer being computed plus the prefetched next one, and
    one layer's unsharded gradients before reduce-scatter (FSDP ``limit_all_gathers``)."""
    par = job.parallel
    if par.zero_stage < 3 or par.zero_shards == 1:
        return 0.0
    per_layer = layer_params(job.arch) / job.arch.layers / par.tp
    e = compute_dtype_bytes(job.precision)
    grad = gradient_bytes_per_param(job.precision, job.framework) if job.trains_all_weights else 0
    return per_layer * (2 * e + grad)


def temporary(job: Job, acts: ActivationBreakdown) -> Component:
    """max(loss peak, one layer's backward) + ZeRO-3 gathered layers + gradient buckets."""
    itemized = job.activation_model in ITEMIZED_PROFILES
    return component(
        "temporary", "max(loss_peak, layer_backward) + gathered_layers + buckets",
        "PyTorch autograd; FSDP/ZeRO-3 prefetch; DDP bucket_cap_mb=25",
        loss_peak=loss_peak_bytes(job) if itemized else 0.0,
        layer_backward=layer_backward_bytes(job, acts) if itemized else acts.working_set_bytes,
        gathered_layers=gathered_param_bytes(job),
        buckets=DDP_BUCKET_BYTES if job.parallel.dp > 1 and job.parallel.zero_stage < 3 else 0)


def context_bytes(job: Job) -> int:
    """The CUDA context (+ NCCL) a job's process holds: stated, else the default."""
    if job.cuda_context_bytes is not None:
        return job.cuda_context_bytes
    return default_context_bytes(job.parallel.gpus)


def overhead(job: Job, tensor_bytes: int) -> Component:
    """CUDA context (+ NCCL when multi-GPU) plus the allocator's reserve over tensor bytes;
    or the S1 seed's flat 10% of the other components."""
    if job.overhead_model == "flat_10pct":
        return component("overhead", "flat_share * tensors", "the S1 seed's flat overhead",
                         flat_share=FLAT_OVERHEAD, tensors=tensor_bytes)
    reserve = ALLOCATOR_RESERVE if job.allocator_reserve is None else job.allocator_reserve
    return component(
        "overhead", "cuda_context + allocator_reserve * tensors",
        "PyTorch CUDA caching allocator; typical CUDA 12 context (assumed, not yet measured)",
        cuda_context=context_bytes(job), allocator_reserve=reserve, tensors=tensor_bytes)


def default_context_bytes(gpus: int) -> int:
    return CUDA_CONTEXT_BYTES + (NCCL_BYTES if gpus > 1 else 0)
