"""Per-GPU totals of a training job's candidate layouts, from the engine itself, cached.

A layout's ``Job`` is the resolved one with the layout's parallelism and knobs put in
(``dataclasses.replace``), and its total is exactly what ``training_estimate`` reports
(``training_memory.training_total``). Totals do not depend on the GPU type (no training
component reads it), so one table serves every GPU type a request searches: its own, the
fits-on table's, a fix's other GPUs; ``totals_for`` keeps the recent tables for the next request
about the same job.

What a step holds whatever its activation knobs (``training_phases.step_states``: model states,
weight copies, buckets, the optimizer step's temporaries) reads only the layout's data, tensor,
pipeline, context and expert parallelism, ZeRO stage, offload and stack, so it is computed once
for the layouts that differ in recompute, micro-batch or sequence parallelism. Two lower bounds
prune before the full evaluation: every phase holds the weights, the optimizer state and ZeRO-3's
gathered layers, the phase that keeps the saved activations holds them too, and the overhead is at
least what lives outside PyTorch, so neither sum ever exceeds the total
(``tests/test_layout_totals.py`` holds them to it).

Those model states are the per-model table a new question reuses: jobs with the same
``step_states_key`` (the same model, precision, optimizer, method...; a new sequence length,
micro-batch or global batch, as most new questions are) share one ``StatesTable`` of them, the
FAMILIES most recent kept."""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from operator import attrgetter
from typing import Any, cast

from service.core.job.resolve import ResolvedJob
from service.core.job.spec import Job, Offload, Parallelism, Recompute
from service.core.job.training_stack import torchtitan_models
from service.core.memory import model_state
from service.core.memory.activations import (
    ActivationBreakdown,
    activation_breakdown,
    activations_component,
)
from service.core.memory.formula import Component
from service.core.memory.overhead import context_bytes, cublas_workspace, overhead_floor
from service.core.memory.regime import framework_of_states, states_framework
from service.core.memory.training_memory import training_total
from service.core.memory.training_phases import (
    PERSISTENT_GRADS,
    StepStates,
    gradients_persist,
    phase_base,
    step_states,
    step_states_key,
)
from service.core.planning.plan_types import Layout
from service.core.planning.shape_tables import forget_shapes
from service.core.planning.stacks import stack_of_layout, stated_stack
from service.core.recent import Recent

TABLES = 8  # recent jobs whose tables a process keeps
FAMILIES = 8  # recent model-state tables (one per model and setup) a process keeps
LAYOUTS_PER_TABLE = 20_000  # past this a table stops remembering (it still answers)
StatesKey = tuple[int, int, int, int, int, int, str, str]
Base = tuple[Component, ...]


@dataclass(frozen=True, slots=True)
class BaseEntry:
    """What every phase of a layout holds, and the lower bound made of it."""

    base: Base  # weights, optimizer state, ZeRO-3's gathered layers
    gradients: int  # bytes of the full gradients (held in every phase when they persist)
    tensors: int  # the base, the gradients where the stack keeps them, cuBLAS's workspace
    bound: int  # ``tensors`` and the overhead's floor on them


@dataclass(slots=True)
class StatesTable:
    """The model states of layouts, for every job of one family (the same
    ``step_states_key``): what every phase holds, and the whole step states."""

    bases: dict[StatesKey, tuple[Base, int]] = field(default_factory=dict)  # and gradients
    step_states: dict[StatesKey, StepStates] = field(default_factory=dict)


_families: Recent[Any, StatesTable] = Recent(FAMILIES)


def states_table(job: Job) -> StatesTable:
    """The shared table of the job's family, the FAMILIES most recent kept."""
    key = step_states_key(job)
    found = _families.get(key)
    return found if found is not None else _families.put(key, StatesTable())


class LayoutTotals:
    """Totals of layouts of one resolved training job, on any GPU type."""

    def __init__(self, resolved: ResolvedJob) -> None:
        self.resolved = resolved
        self.base = resolved.job
        self._fields = _field_values(resolved.job)
        self._par = resolved.job.parallel
        # activation profile: as stated, else hf, or megatron with TP/PP/SP
        self.activation_model = (resolved.job.activation_model
                                 if resolved.pinned("activation_model") else None)
        self._totals: dict[Layout, int] = {}
        self._bases: dict[StatesKey, BaseEntry] = {}  # with this job's lower bound
        self._shared = states_table(resolved.job)
        self._floors: dict[Layout, int] = {}
        # the tightest lower bound known per layout (the base's, then the floor): a layout the
        # search asks about again, for another GPU type's budget, is settled by one lookup
        self._lows: dict[Layout, int] = {}
        self._stacks: dict[Layout, str] = {}
        self._fixed_stack = stated_stack(resolved)
        self._torchtitan_ships = resolved.job.model_id in torchtitan_models()
        self.evaluations = 0
        self._states_floor: tuple[int, int] | None = None
        self._overhead_jobs: dict[bool, Job] = {}

    def stack(self, layout: Layout) -> str:
        """The stack that runs a layout (``stacks.layout_stack``)."""
        found = self._stacks.get(layout)
        if found is None:
            found = stack_of_layout(self._fixed_stack, self._torchtitan_ships, layout)
            if len(self._stacks) < LAYOUTS_PER_TABLE:
                self._stacks[layout] = found
        return found

    def act_model(self, layout: Layout) -> str:
        if self.activation_model is not None:
            return self.activation_model
        megatron = layout.tp > 1 or layout.pp > 1 or layout.sequence_parallel
        return "megatron" if megatron else "hf"

    def job(self, layout: Layout, base: Job | None = None) -> Job:
        """The engine's Job for a layout (everything else as the request resolved it; ``base``:
        the resolved job on another GPU type)."""
        fields = self._fields if base is None else _field_values(base)
        par = Parallelism(dp=layout.dp, tp=layout.tp, pp=layout.pp, cp=layout.cp, ep=layout.ep,
                          sequence_parallel=layout.sequence_parallel,
                          zero_stage=layout.zero_stage, shard_group=self._par.shard_group,
                          pp_schedule=self._par.pp_schedule,
                          virtual_stages=self._par.virtual_stages)
        # Job(**values) is dataclasses.replace without its per-field lookups
        return Job(**{**fields, "parallel": par, "recompute": cast(Recompute, layout.recompute),
                      "micro_batch": layout.micro_batch, "global_batch": layout.global_batch,
                      "offload": cast(Offload, layout.offload),
                      "activation_model": self.act_model(layout),
                      "framework": self.stack(layout)})

    def total(self, layout: Layout) -> int:
        """Per-GPU total in bytes, as ``training_estimate`` reports it."""
        found = self._totals.get(layout)
        return found if found is not None else self._evaluate(layout)

    def _evaluate(self, layout: Layout, job: Job | None = None,
                  acts: ActivationBreakdown | None = None) -> int:
        self.evaluations += 1
        job = job or self.job(layout)
        total = training_total(job, self._states(layout, job), acts)
        if len(self._totals) < LAYOUTS_PER_TABLE:
            self._totals[layout] = total
        return total

    def _key(self, layout: Layout) -> StatesKey:
        # sequence parallelism splits only activations and what scales with tokens
        return (layout.dp, layout.tp, layout.pp, layout.cp, layout.ep, layout.zero_stage,
                layout.offload, self.stack(layout))

    def _base(self, layout: Layout, job: Job | None = None) -> BaseEntry:
        """The layout's ``phase_base``, its gradients, and the lower bound made of them
        (``job``: the layout's, when the caller has it; built only when the family's table
        lacks the base)."""
        key = self._key(layout)
        found = self._bases.get(key)
        if found is None:
            shared = self._shared.bases.get(key)
            if shared is None:
                job = job or self.job(layout)
                shared = (phase_base(job), model_state.gradients(job).bytes)
                if len(self._shared.bases) < LAYOUTS_PER_TABLE:
                    self._shared.bases[key] = shared
            base, grads = shared
            tensors = sum(c.bytes for c in base)
            full = self.base.trains_all_weights and self.base.is_training
            if framework_of_states(key[-1], layout.zero_stage, layout.offload, full) \
                    in PERSISTENT_GRADS:  # the stack keeps them in every phase
                tensors += grads
            if self.base.overhead_model == "measured":
                tensors += cublas_workspace(self.base).bytes
            bound = tensors + overhead_floor(self._overhead_job(layout, job), tensors)
            found = BaseEntry(base, grads, tensors, bound)
            if len(self._bases) < LAYOUTS_PER_TABLE:
                self._bases[key] = found
        return found

    def _overhead_job(self, layout: Layout, job: Job | None) -> Job:
        """A job that stands for the layout in ``overhead_floor``, which reads the overhead's
        settings (the same for every layout) and whether the job runs on more than one GPU
        (``context_bytes``): one job per answer to that (``tests/test_layout_totals.py``)."""
        several = layout.gpus > 1
        found = self._overhead_jobs.get(several)
        if found is None:
            found = self._overhead_jobs[several] = job or self.job(layout)
        return found

    def _states(self, layout: Layout, job: Job | None = None) -> StepStates:
        """The layout's ``step_states``: they read only its parallelism, offload and stack."""
        key = self._key(layout)
        shared = self._shared.step_states
        found = shared.get(key)
        if found is None:
            job = job or self.job(layout)
            found = step_states(job, self._base(layout, job).base)
            if len(shared) < LAYOUTS_PER_TABLE:
                shared[key] = found
        return found

    def states_floor(self) -> tuple[int, int]:
        """(the weights, gradients and optimizer state of the whole model on one GPU, what
        lives outside PyTorch there): the search's lower bound on the GPU count divides the
        first by a GPU's room after the second."""
        if self._states_floor is None:
            single = replace(self.base, parallel=Parallelism())
            states = sum(c.bytes for c in (model_state.weights(single),
                                           model_state.gradients(single),
                                           model_state.optimizer(single)))
            self._states_floor = (states, context_bytes(single))
        return self._states_floor

    def lower_bound(self, layout: Layout) -> int:
        """At most the total: the components every phase holds (the gradients too where the
        stack keeps them between steps), and the overhead's floor on them."""
        return self._base(layout).bound

    def floor(self, layout: Layout, job: Job | None = None,
              acts: list[ActivationBreakdown] | None = None) -> int:
        """At most the total, and tighter than ``lower_bound``: the phase that keeps the saved
        activations holds the phase base, the gradients when they persist
        (``gradients_persist``) and the activations; the overhead's floor on those. ``acts``:
        receives the layout's activations when they are computed here."""
        found = self._floors.get(layout)
        if found is None:
            job = job or self.job(layout)
            breakdown = activation_breakdown(job)
            if acts is not None:
                acts.append(breakdown)
            entry = self._base(layout, job)
            tensors = entry.tensors + activations_component(job, breakdown).bytes
            if states_framework(job) not in PERSISTENT_GRADS and gradients_persist(job):
                tensors += entry.gradients
            found = tensors + overhead_floor(job, tensors)
            if len(self._floors) < LAYOUTS_PER_TABLE:
                self._floors[layout] = found
        return found

    def fits(self, layout: Layout, budget: int) -> bool:
        """Whether the layout's total is within the budget, by a bound when one settles it."""
        found = self._totals.get(layout)
        if found is not None:
            return found <= budget
        low = self._lows.get(layout)
        if low is None:
            low = self._base(layout).bound
            if len(self._lows) < LAYOUTS_PER_TABLE:
                self._lows[layout] = low
        if low > budget:
            return False
        job: Job | None = None
        acts: list[ActivationBreakdown] = []
        if layout not in self._floors:  # the tighter bound, once
            job = self.job(layout)  # built only when the floor or the total is needed
            low = self.floor(layout, job, acts)
            if len(self._lows) < LAYOUTS_PER_TABLE:
                self._lows[layout] = low
            if low > budget:
                return False
        elif self._floors[layout] > budget:  # the floor came from ``floor`` (branch and bound)
            return False
        return self._evaluate(layout, job, acts[0] if acts else None) <= budget


def _field_values(job: Job) -> dict[str, Any]:
    return {f.name: getattr(job, f.name) for f in fields(Job)}


_tables: Recent[tuple[Any, frozenset[str]], LayoutTotals] = Recent(TABLES)
_but_gpu = attrgetter(*(f.name for f in fields(Job) if f.name != "gpu"))


def totals_for(resolved: ResolvedJob) -> LayoutTotals:
    """The table of this job (the same job but for its GPU and the same stated fields: the
    same totals), the TABLES most recent kept."""
    key = (_but_gpu(resolved.job), resolved.stated)
    found = _tables.get(key)
    return found if found is not None else _tables.put(key, LayoutTotals(resolved))


def clear_tables(states: bool = True) -> None:
    """Forget every kept table (benchmarks time a cold search); ``states`` False: keep the
    per-model tables, of model states and of layout shapes (``shape_tables.py``): a new question
    about a model asked before."""
    _tables.clear()
    if states:
        _families.clear()
        forget_shapes()
