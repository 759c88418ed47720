"""Per-GPU memory of a training or fine-tuning job: the components live at the peak phase of a
step (``training_phases.py``), each a formula, plus what no tensor explains (``overhead.py``)."""

from __future__ import annotations

from service.core.job.spec import Job
from service.core.memory import model_state
from service.core.memory.activations import ActivationBreakdown, activation_breakdown
from service.core.memory.breakdown import Estimate
from service.core.memory.formula import Component
from service.core.memory.overhead import cublas_workspace, overhead
from service.core.memory.training_phases import (
    Phase,
    StepStates,
    peak_phase,
    shared_step_states,
    training_phases,
)
from service.core.memory.transients import largest_transient
from service.core.model.adapter_params import lora_params
from service.core.model.params import active_parameter_count, parameter_count


def peak_components(job: Job, states: StepStates | None = None,
                    acts: ActivationBreakdown | None = None
                    ) -> tuple[ActivationBreakdown, tuple[Phase, ...], Phase,
                               tuple[Component, ...]]:
    """The activations, the phases, the peak phase and the components at the peak (overhead
    last): what ``training_estimate`` reports, without its counts and details. ``states``,
    ``acts``: the job's ``step_states`` and ``activation_breakdown`` when the caller has them."""
    acts = acts or activation_breakdown(job)
    phases = training_phases(job, acts, states or shared_step_states(job))
    peak = peak_phase(phases)
    measured = job.overhead_model == "measured"
    tensors = (*peak.components, *((cublas_workspace(job),) if measured else ()))
    allocated = sum(c.bytes for c in tensors)
    return acts, phases, peak, (*tensors, overhead(job, allocated, largest_transient(job)))


def training_total(job: Job, states: StepStates | None = None,
                   acts: ActivationBreakdown | None = None) -> int:
    """``training_estimate(job).total_bytes``, computed without the parameter counts and the
    details the planner does not read."""
    return sum(c.bytes for c in peak_components(job, states, acts)[3])


def training_estimate(job: Job) -> Estimate:
    acts, phases, peak, comps = peak_components(job)
    allocated = sum(c.bytes for c in comps[:-1])
    trainable = (parameter_count(job.arch) if job.trains_all_weights
                 else lora_params(job.arch, job.lora_rank, job.lora_targets))
    scale = job.param_scale
    details: dict[str, int | float] = {
        "activation_per_layer_bytes": acts.per_layer_bytes,
        "activation_non_layer_bytes": acts.non_layer_bytes,
        "pipeline_in_flight": acts.in_flight_micro_batches, "grad_accum": job.grad_accum,
        "allocated_bytes": allocated}
    details.update({f"phase: {p.name}": p.bytes for p in phases})
    return Estimate(
        job=job, components=comps,
        params_total=round(parameter_count(job.arch) * scale),
        params_active=round(active_parameter_count(job.arch) * scale),
        params_trainable=round(trainable * (scale if job.trains_all_weights else 1.0)),
        cpu_offload_bytes=model_state.offloaded_bytes(job), details=details,
        peak_phase=peak.name)
