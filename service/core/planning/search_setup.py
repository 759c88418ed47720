"""What the training planner may choose for a resolved job on one GPU type, and its searcher.

Fields the user stated (zero_stage, tp, pp, cp, ep, recompute, micro_batch, offload,
sequence_parallel) are kept; the planner chooses the rest."""

from __future__ import annotations

from service.core.hardware.gpus import Gpu
from service.core.job.resolve import ResolvedJob
from service.core.planning.layout_memory import MemoryModel
from service.core.planning.layouts import (
    SearchSpace,
    context_parallel_sizes,
    nvlink_tp_domain,
    tensor_parallel_sizes,
)
from service.core.planning.search import Searcher
from service.core.planning.shape_tables import shape_probes
from service.core.planning.stacks import model_parallelism, recomputes, zero_stages


def per_node(resolved: ResolvedJob, gpu: Gpu) -> int:
    return resolved.gpus_per_node if resolved.pinned("gpus_per_node") else gpu.gpus_per_node


def budget_bytes(resolved: ResolvedJob, gpu: Gpu) -> int:
    return round(gpu.memory_bytes_usable * resolved.headroom)


def build_space(resolved: ResolvedJob, gpu: Gpu,
                offloads: tuple[str, ...] | None = None) -> SearchSpace:
    job, arch = resolved.job, resolved.job.arch
    par, pinned = job.parallel, resolved.pinned
    node = per_node(resolved, gpu)
    domain = nvlink_tp_domain(gpu, node)
    runs = model_parallelism(resolved, gpu)  # what the stack runs (stacks.py)
    return SearchSpace(
        arch=arch, seq_len=job.seq_len, global_batch=job.global_batch,
        nvlink_domain=domain, gpus_per_node=node,
        tps=(par.tp,) if pinned("tp") else
        (tensor_parallel_sizes(arch, domain) if runs.tp else (1,)),
        pps=(par.pp,) if pinned("pp") else (None if runs.pp else (1,)),
        cps=(par.cp,) if pinned("cp") else
        (context_parallel_sizes(job.seq_len) if runs.cp and not arch.sliding_window else (1,)),
        eps=(par.ep,) if pinned("ep") else (None if runs.ep else (1,)),
        zero_stages=(par.zero_stage,) if pinned("zero_stage") else zero_stages(resolved),
        recomputes=(job.recompute,) if pinned("recompute") else recomputes(resolved),
        micro_batches=(job.micro_batch,) if pinned("micro_batch") else None,
        offloads=offloads or ((job.offload,) if pinned("offload") else ("none",)),
        sequence_parallel=par.sequence_parallel if pinned("sequence_parallel") else None,
        shard_group=par.shard_group,
        zero_stated=pinned("zero_stage"),
        shape_stated=pinned("tp") and pinned("pp"),
        # accelerate's CP is for sequences one GPU cannot hold (its guide: 128k); a LoRA that
        # fits with recompute and data parallelism runs so
        cp_last_resort=not job.trains_all_weights and not pinned("cp"),
    )


def make_searcher(resolved: ResolvedJob, gpu: Gpu, space: SearchSpace | None = None,
                  memory: MemoryModel | None = None) -> Searcher:
    space = space or build_space(resolved, gpu)
    return Searcher(space, memory or MemoryModel(resolved, gpu), budget_bytes(resolved, gpu),
                    resolved.job.parallel.virtual_stages, probes=shape_probes(space))
