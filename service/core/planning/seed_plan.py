"""The S3 seed's GPU counts on request (``method: seed_even_split``), each with why it cannot run.

The seed (seed-cases.md, S3) divides model states and *all* activations of the global batch
evenly over N GPUs (``seed_method.even_split_gpu_count``), reading "40 GB" as 40 x 10^9 bytes,
with its own block activation model (``seed_s3``). Its table: ZeRO-1 / 2 / 3 without recompute,
ZeRO-3 with checkpointing, and with FlashAttention too. Each count is then checked as a real
layout: data parallelism splits whole sequences (at most global_batch ranks, each holding
ceil(global_batch / dp) sequences at once, as the seed assumes: no accumulation), counts above
one node are whole nodes, and the per-GPU total with the engine's own temporary buffers and
overhead must fit the GPU's usable memory.
"""

from __future__ import annotations

from dataclasses import replace
from typing import cast

from service.core.hardware.gpus import Gpu
from service.core.job.resolve import ResolvedJob
from service.core.job.spec import Job, Parallelism, Recompute
from service.core.memory.activations import activation_breakdown
from service.core.planning.layout_memory import MemoryModel
from service.core.planning.layouts import counts_ok, node_count
from service.core.planning.plan_types import Layout, SeedCount
from service.core.planning.seed_method import even_split_gpu_count
from service.core.units import GB, gb

SEED_ROWS: tuple[tuple[int, str, bool, str], ...] = (
    (1, "none", False, "ZeRO-1"),
    (2, "none", False, "ZeRO-2"),
    (3, "none", False, "ZeRO-3"),
    (3, "full", False, "ZeRO-3 + checkpointing"),
    (3, "full", True, "ZeRO-3 + checkpointing + FlashAttention"),
)


def seed_capacity(gpu: Gpu) -> int:
    """The seed reads the marketed "40 GB" as 40 x 10^9 bytes."""
    marketed = gpu.memory_bytes_as_sold / (2**30 if gpu.memory_marketing_unit == "GiB" else GB)
    return round(marketed * GB)


def _rows(resolved: ResolvedJob) -> list[tuple[int, str, bool, str]]:
    job, pinned = resolved.job, resolved.pinned
    rows = [r for r in SEED_ROWS
            if (not pinned("zero_stage") or r[0] == job.parallel.zero_stage)
            and (not pinned("recompute") or r[1] == job.recompute)
            and (not pinned("flash_attn") or r[2] == job.flash_attn)]
    if rows:
        return rows
    zero = job.parallel.zero_stage if pinned("zero_stage") else 3
    recompute = job.recompute if pinned("recompute") else "none"
    flash = job.flash_attn and pinned("flash_attn")
    return [(zero, recompute, flash, f"ZeRO-{zero}, {recompute} recompute"
             + (", FlashAttention" if flash else ""))]


def seed_counts(resolved: ResolvedJob, gpu: Gpu, per_node: int) -> list[SeedCount]:
    """The seed's counts for the request's configuration (or its whole table)."""
    base = resolved.job
    batch = base.global_batch or base.micro_batch
    capacity = seed_capacity(gpu)
    act_model = base.activation_model if resolved.pinned("activation_model") else "seed_s3"
    out: list[SeedCount] = []
    for zero, recompute, flash, label in _rows(resolved):
        job = replace(base, micro_batch=batch, global_batch=0,
                      parallel=Parallelism(zero_stage=zero),
                      recompute=cast(Recompute, recompute), flash_attn=flash,
                      activation_model=act_model)
        count = even_split_gpu_count(job, capacity)
        one = activation_breakdown(replace(job, micro_batch=1))
        reasons = _reasons(count.gpus, batch, per_node,
                           one.layers_bytes + one.working_set_bytes, capacity)
        if count.gpus is not None:
            reasons += _as_layout(resolved, gpu, job, count.gpus, batch, per_node, capacity)
        out.append(SeedCount(f"{label}: {count.gpus if count.gpus else 'none'} x {gpu.name} "
                             f"(the seed's even split)", count.gpus, tuple(reasons)))
    return out


def _reasons(gpus: int | None, batch: int, per_node: int, one_sequence: int,
             capacity: int) -> list[str]:
    if gpus is None:
        return ["the unsharded model states alone exceed the GPU"]
    out: list[str] = []
    if gpus > batch:
        out.append(f"{gpus} GPUs for {batch} sequences: data parallelism splits whole sequences, "
                   f"so at most {batch} ranks share a step")
    elif batch % gpus:
        out.append(f"{batch} sequences do not split evenly over {gpus} data-parallel ranks")
    if not counts_ok(gpus, per_node):
        out.append(f"{gpus} GPUs is not whole {per_node}-GPU nodes "
                   f"({node_count(gpus, per_node)} nodes = {node_count(gpus, per_node) * per_node})")
    if one_sequence > capacity:
        out.append(f"one sequence alone keeps {gb(one_sequence)} of activations (the seed's "
                   f"model), more than the {gb(capacity)} GPU: only recompute, tensor or "
                   "context parallelism make it fit")
    return out


def _as_layout(resolved: ResolvedJob, gpu: Gpu, job: Job, gpus: int, batch: int,
               per_node: int, capacity: int) -> list[str]:
    """The count as a real data-parallel layout: ceil(batch / dp) sequences per GPU at once."""
    dp = min(gpus, batch)
    mb = -(-batch // dp)
    seeded = replace(resolved, job=job, stated=resolved.stated | {"activation_model"})
    memory = MemoryModel(seeded, gpu)
    layout = Layout(gpus=dp, nodes=node_count(dp, per_node), dp=dp, tp=1, pp=1, cp=1, ep=1,
                    zero_stage=job.parallel.zero_stage, sequence_parallel=False,
                    recompute=job.recompute, micro_batch=mb, grad_accum=1,
                    global_batch=dp * mb, offload="none")
    total = memory.total(layout)
    if total <= min(capacity, gpu.memory_bytes_usable):
        return []
    left_out = "the CUDA context and NCCL buffers, the allocator's reserve" + (
        ", ZeRO-3's gathered layers" if job.parallel.zero_stage == 3 else "") \
        + " and the backward's temporary buffers"
    return [f"as a real layout (dp={dp}, {mb} sequence{'s' if mb > 1 else ''} per GPU at once, no "
            f"accumulation) each GPU needs {gb(total)} > {gb(capacity)}; the even split leaves "
            f"out {left_out}"]
