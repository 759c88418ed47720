"""Per-GPU memory of a candidate layout, from the engine's own component functions, cached.

The planner resolves the request once, then builds each candidate's ``Job`` with
``dataclasses.replace`` and sums exactly what ``estimate.training_estimate`` sums: weights,
gradients, optimizer (model_state.py), kept activations (activations.py), temporary buffers
and overhead (overhead.py). Parts are cached by the fields they depend on, so thousands of
candidates cost a few hundred engine calls.
"""

from __future__ import annotations

from dataclasses import replace
from typing import cast

from service.core.hardware.gpus import Gpu
from service.core.job.resolve import Resolved
from service.core.job.spec import Job, Offload, Parallelism, Recompute
from service.core.memory import model_state
from service.core.memory.activations import activation_breakdown, kept_activation_bytes
from service.core.memory.breakdown import Estimate
from service.core.memory.estimate_job import training_estimate
from service.core.memory.overhead import default_context_bytes, overhead, temporary
from service.core.planning.plan_types import Layout

StatesKey = tuple[int, int, int, int, int, str]
ActsKey = tuple[int, int, int, bool, int, str, int]


class MemoryModel:
    """Per-GPU bytes of layouts of one resolved training job on one GPU type."""

    def __init__(self, resolved: Resolved, gpu: Gpu, activation_model: str | None,
                 context_stated: bool) -> None:
        self.resolved = resolved
        self.base = replace(resolved.job, gpu=gpu)
        self.gpu = gpu
        self.activation_model = activation_model  # None: hf, or megatron with TP/PP/SP
        self.context_stated = context_stated
        self._states: dict[StatesKey, int] = {}
        self._acts: dict[tuple[ActsKey, bool, bool], int] = {}
        self._totals: dict[Layout, int] = {}
        self._context_jobs: dict[bool, Job] = {}
        self.evaluations = 0

    def act_model(self, layout: Layout) -> str:
        if self.activation_model is not None:
            return self.activation_model
        megatron = layout.tp > 1 or layout.pp > 1 or layout.sequence_parallel
        return "megatron" if megatron else "hf"

    def job(self, layout: Layout) -> Job:
        """The engine's Job for a layout (everything else as the request resolved it)."""
        base = self.base
        shard = base.parallel.shard_group if base.parallel.shard_group else 0
        par = Parallelism(dp=layout.dp, tp=layout.tp, pp=layout.pp, cp=layout.cp, ep=layout.ep,
                          sequence_parallel=layout.sequence_parallel,
                          zero_stage=layout.zero_stage, shard_group=shard,
                          pp_schedule=base.parallel.pp_schedule,
                          virtual_stages=base.parallel.virtual_stages)
        context = base.cuda_context_bytes if self.context_stated \
            else default_context_bytes(layout.gpus)
        return replace(base, parallel=par, recompute=cast(Recompute, layout.recompute),
                       micro_batch=layout.micro_batch, global_batch=layout.global_batch,
                       offload=cast(Offload, layout.offload),
                       activation_model=self.act_model(layout),
                       cuda_context_bytes=context)

    def _context_job(self, gpus: int) -> Job:
        multi = gpus > 1
        job = self._context_jobs.get(multi)
        if job is None:
            context = self.base.cuda_context_bytes if self.context_stated \
                else default_context_bytes(gpus)
            job = replace(self.base, cuda_context_bytes=context)
            self._context_jobs[multi] = job
        return job

    def total(self, layout: Layout) -> int:
        """Per-GPU total in bytes, as ``training_estimate`` would report it."""
        cached = self._totals.get(layout)
        if cached is not None:
            return cached
        self.evaluations += 1
        job: Job | None = None
        skey: StatesKey = (layout.tp, layout.pp, layout.ep, layout.zero_stage, layout.dp,
                           layout.offload)
        states = self._states.get(skey)
        if states is None:
            job = self.job(layout)
            states = sum(c.bytes for c in (model_state.weights(job), model_state.gradients(job),
                                           model_state.optimizer(job)))
            self._states[skey] = states
        # accumulation matters only through the micro-batches in flight on the first stage,
        # min(pp, m) (activations.in_flight_micro_batches; tests check the cache against it)
        akey: ActsKey = (layout.tp, layout.pp, layout.cp, layout.sequence_parallel,
                         layout.micro_batch, layout.recompute,
                         min(layout.pp, layout.grad_accum) if layout.pp > 1 else 0)
        tkey = (akey, layout.zero_stage == 3 and layout.dp > 1,
                layout.dp > 1 and layout.zero_stage < 3)
        acts_temp = self._acts.get(tkey)
        if acts_temp is None:
            job = job or self.job(layout)
            acts = activation_breakdown(job)
            acts_temp = kept_activation_bytes(acts, layout.pp) + temporary(job, acts).bytes
            self._acts[tkey] = acts_temp
        tensors = states + acts_temp
        total = tensors + overhead(self._context_job(layout.gpus), tensors).bytes
        self._totals[layout] = total
        return total

    def estimate(self, layout: Layout) -> Estimate:
        """The engine's full breakdown of a layout (formulas, sources, assumptions)."""
        resolved = Resolved(self.job(layout), self.resolved.model, list(self.resolved.assumptions))
        return training_estimate(resolved)
