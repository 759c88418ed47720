"""Per-GPU memory of a candidate layout, from the engine's own component functions, cached.

The planner builds each candidate's ``Job`` from the resolved one with ``dataclasses.replace``
and sums exactly what ``training_memory.training_estimate`` sums: weights, gradients, optimizer
(model_state.py), activations (training_memory.activations_component), temporary buffers and
overhead (overhead.py). Parts are cached by the fields they depend on, so thousands of
candidates cost a few hundred engine calls.
"""

from __future__ import annotations

from dataclasses import replace
from typing import cast

from service.core.hardware.gpus import Gpu
from service.core.job.resolve import ResolvedJob
from service.core.job.spec import Job, Offload, Parallelism, Recompute
from service.core.memory.breakdown import Estimate
from service.core.memory.training_memory import training_estimate
from service.core.planning.plan_types import Layout
from service.core.planning.stacks import layout_stack

StatesKey = tuple[int, int, int, int, int, str]
ActsKey = tuple[int, int, int, bool, int, str, int]


class MemoryModel:
    """Per-GPU bytes of layouts of one resolved training job on one GPU type."""

    def __init__(self, resolved: ResolvedJob, gpu: Gpu) -> None:
        self.resolved = resolved
        self.base = replace(resolved.job, gpu=gpu)
        self.gpu = gpu
        # activation profile: as stated, else hf, or megatron with TP/PP/SP
        self.activation_model = (resolved.job.activation_model
                                 if resolved.pinned("activation_model") else None)
        self._states: dict[StatesKey, int] = {}
        self._acts: dict[tuple[ActsKey, bool, bool], int] = {}
        self._totals: dict[Layout, int] = {}
        self._overhead_jobs: dict[bool, Job] = {}
        self.evaluations = 0

    def act_model(self, layout: Layout) -> str:
        if self.activation_model is not None:
            return self.activation_model
        megatron = layout.tp > 1 or layout.pp > 1 or layout.sequence_parallel
        return "megatron" if megatron else "hf"

    def job(self, layout: Layout) -> Job:
        """The engine's Job for a layout (everything else as the request resolved it)."""
        base = self.base
        par = Parallelism(dp=layout.dp, tp=layout.tp, pp=layout.pp, cp=layout.cp, ep=layout.ep,
                          sequence_parallel=layout.sequence_parallel,
                          zero_stage=layout.zero_stage, shard_group=base.parallel.shard_group,
                          pp_schedule=base.parallel.pp_schedule,
                          virtual_stages=base.parallel.virtual_stages)
        return replace(base, parallel=par, recompute=cast(Recompute, layout.recompute),
                       micro_batch=layout.micro_batch, global_batch=layout.global_batch,
                       offload=cast(Offload, layout.offload),
                       activation_model=self.act_model(layout),
                       framework=layout_stack(self.resolved, layout))

    def _overhead_job(self, gpus: int) -> Job:
        """The overhead depends on the layout only through one GPU or several (NCCL)."""
        multi = gpus > 1
        job = self._overhead_jobs.get(multi)
        if job is None:
            job = replace(self.base, parallel=Parallelism(dp=2 if multi else 1))
            self._overhead_jobs[multi] = job
        return job

    def total(self, layout: Layout) -> int:
        """Per-GPU total in bytes, as ``training_estimate`` reports it (cached per layout)."""
        cached = self._totals.get(layout)
        if cached is not None:
            return cached
        self.evaluations += 1
        total = training_estimate(self.job(layout)).total_bytes
        self._totals[layout] = total
        return total

    def estimate(self, layout: Layout) -> Estimate:
        """The engine's full breakdown of a layout (formulas and sources)."""
        return training_estimate(self.job(layout))
