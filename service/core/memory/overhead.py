"""Memory no tensor of the model explains: what the process holds outside PyTorch (the CUDA
context, cuBLAS handles, NCCL), cuBLAS's workspaces inside it, and the caching allocator's
cached free blocks at the peak. The constants are measured (``calibration.py``)."""

from __future__ import annotations

from functools import cache

from service.core.job.spec import Job
from service.core.memory.calibration import calibration
from service.core.memory.formula import Component, component

FLAT_OVERHEAD = 0.10  # the S1 seed's flat 10%
ALLOCATOR_SOURCE = ("PyTorch c10/cuda/CUDACachingAllocator.cpp: freed blocks stay cached; "
                    "the reserve at the peak measured on H100 runs (service/data/calibration.json)")


def context_bytes(job: Job) -> int:
    """Outside PyTorch: the stated CUDA context, else the measured one (+ NCCL on several
    GPUs)."""
    if job.cuda_context_bytes is not None:
        return job.cuda_context_bytes
    cal = calibration()
    nccl = cal.nccl_bytes.value if job.parallel.gpus > 1 else 0
    return round(cal.non_torch_bytes.value + nccl)


def cublas_workspace(job: Job) -> Component:
    """cuBLAS and cuBLASLt workspaces, allocated through PyTorch on the first matmul (the same
    for every job: built once)."""
    return _cublas_workspace()


@cache
def _cublas_workspace() -> Component:
    cal = calibration()
    return component("overhead", "cublas_workspaces", cal.cublas_workspace_bytes.source,
                     "inside PyTorch's allocator", cublas_workspaces=round(
                         cal.cublas_workspace_bytes.value))


def overhead_floor(job: Job, allocated: int) -> int:
    """At most ``overhead(job, a, t).bytes`` for any ``a >= allocated`` and any transient
    ``t``: the same terms with the transient dropped (a maximum is at least each of its terms)
    and the allocated bytes at their floor. The planner's lower bounds add it."""
    if job.overhead_model == "flat_10pct":
        return int(FLAT_OVERHEAD * allocated)
    share = (job.allocator_reserve if job.allocator_reserve is not None
             else calibration().fragmentation_share.value)
    return context_bytes(job) + int(share * allocated)


def overhead(job: Job, allocated: int, largest_transient: float) -> Component:
    """Outside PyTorch, plus the allocator's cached free memory at the peak: at least one
    stranded copy of the job's largest transient block, else a measured share of what is
    allocated (``allocator_reserve`` states a share instead). The S1 seed's model: a flat
    10% of the other components."""
    if job.overhead_model == "flat_10pct":
        return component("overhead", "flat_share * tensors", "the S1 seed's flat overhead",
                         flat_share=FLAT_OVERHEAD, tensors=allocated)
    cal = calibration()
    context = context_bytes(job)
    source = f"{cal.non_torch_bytes.source}; {ALLOCATOR_SOURCE}"
    if job.allocator_reserve is not None:
        return component("overhead", "outside_pytorch + allocator_reserve * allocated", source,
                         outside_pytorch=context, allocator_reserve=job.allocator_reserve,
                         allocated=allocated)
    return component(
        "overhead", "outside_pytorch + max(stranded * largest_transient, "
        "fragmentation * allocated)",
        source, "allocator reserve: the larger of a stranded transient block and the share",
        outside_pytorch=context, stranded=cal.stranded_transient_share.value,
        largest_transient=round(largest_transient), fragmentation=cal.fragmentation_share.value,
        allocated=allocated)
