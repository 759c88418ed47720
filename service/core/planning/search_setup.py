"""What the training planner may choose for a request on one GPU type, and its searcher."""

from __future__ import annotations

from service.core.hardware.gpus import Gpu
from service.core.job.request import EstimateRequest
from service.core.job.resolve import Resolved
from service.core.planning.layout_memory import MemoryModel
from service.core.planning.layouts import (
    SearchSpace,
    context_parallel_sizes,
    tensor_parallel_sizes,
)
from service.core.planning.plan_types import DEFAULT_HEADROOM
from service.core.planning.search import Searcher

ALL_ZERO = (0, 1, 2, 3)
ALL_RECOMPUTE = ("none", "selective", "full")


def per_node(request: EstimateRequest, gpu: Gpu) -> int:
    return request.gpus_per_node or gpu.gpus_per_node


def headroom(request: EstimateRequest) -> float:
    return request.memory_headroom if request.memory_headroom is not None else DEFAULT_HEADROOM


def build_space(request: EstimateRequest, resolved: Resolved, gpu: Gpu,
                offloads: tuple[str, ...] | None = None) -> SearchSpace:
    job, arch = resolved.job, resolved.job.arch
    node = per_node(request, gpu)
    domain = min(gpu.nvlink_domain, node)
    # HF Trainer / accelerate without Megatron (framework "hf") has no tensor or pipeline
    # parallelism: only data parallelism with ZeRO/FSDP sharding.
    data_parallel_only = job.framework == "hf"
    return SearchSpace(
        arch=arch, seq_len=job.seq_len, global_batch=request.global_batch or 0,
        nvlink_domain=domain, gpus_per_node=node,
        tps=(request.tp,) if request.tp else
        ((1,) if data_parallel_only else tensor_parallel_sizes(arch, domain)),
        pps=(request.pp,) if request.pp else ((1,) if data_parallel_only else None),
        cps=(request.cp,) if request.cp else
        ((1,) if data_parallel_only else context_parallel_sizes(job.seq_len)),
        eps=(request.ep,) if request.ep else None,
        zero_stages=(request.zero_stage,) if request.zero_stage is not None else ALL_ZERO,
        recomputes=(job.recompute,) if request.recompute else ALL_RECOMPUTE,
        micro_batches=(request.micro_batch,) if request.micro_batch else None,
        offloads=offloads or ((job.offload,) if request.offload else ("none",)),
        sequence_parallel=request.sequence_parallel,
        shard_group=request.shard_group or 0,
        zero_stated=request.zero_stage is not None,
    )


def make_searcher(request: EstimateRequest, resolved: Resolved, gpu: Gpu,
                  space: SearchSpace | None = None) -> Searcher:
    memory = MemoryModel(resolved, gpu, request.activation_model,
                         request.cuda_context_bytes is not None)
    budget = round(gpu.memory_bytes_usable * headroom(request))
    return Searcher(space or build_space(request, resolved, gpu), memory, budget,
                    resolved.job.parallel.virtual_stages)
