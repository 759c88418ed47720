"""Per-GPU memory of a training or fine-tuning job: the components live at the peak phase of a
step (``training_phases.py``), each a formula, plus what no tensor explains (``overhead.py``)."""

from __future__ import annotations

from service.core.job.spec import Job
from service.core.memory import model_state
from service.core.memory.activations import activation_breakdown
from service.core.memory.breakdown import Estimate
from service.core.memory.lora import lora_params
from service.core.memory.overhead import cublas_workspace, overhead
from service.core.memory.training_phases import peak_phase, training_phases
from service.core.memory.transients import largest_transient
from service.core.model.params import active_parameter_count, parameter_count


def training_estimate(job: Job) -> Estimate:
    acts = activation_breakdown(job)
    phases = training_phases(job, acts)
    peak = peak_phase(phases)
    measured = job.overhead_model == "measured"
    tensors = (*peak.components, *((cublas_workspace(job),) if measured else ()))
    allocated = sum(c.bytes for c in tensors)
    comps = (*tensors, overhead(job, allocated, largest_transient(job)))
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
