"""Per-GPU memory of a training or fine-tuning job: model states, activations, temporary
buffers and overhead, each a formula component."""

from __future__ import annotations

from service.core.job.spec import Job
from service.core.memory import model_state
from service.core.memory.activations import ActivationBreakdown, activation_breakdown
from service.core.memory.breakdown import Estimate
from service.core.memory.formula import Component, component
from service.core.memory.lora import lora_params
from service.core.memory.overhead import overhead, temporary
from service.core.model.params import active_parameter_count, parameter_count

ACTIVATION_SOURCES = {
    "hf": "saved tensors of HF transformers modules, checked in bench/measure",
    "hf_cpu": "saved tensors of HF transformers modules on CPU, as measured in bench/measure",
    "megatron": "Korthikanti et al. 2022 eq. 2, generalised to GQA/SwiGLU (saved_tensors.py)",
    "korthikanti": "Korthikanti et al. 2022, arXiv 2205.05198, eq. 2",
    "seed_s3": "the S3 seed's block model (seed-cases.md)",
}
KEPT = {"none": "all saved tensors", "selective": "core attention recomputed",
        "full": "layer inputs only"}


def activations_component(job: Job, acts: ActivationBreakdown) -> Component:
    """Layers x kept bytes per layer x micro-batches in flight, plus the logits/loss term.

    pp = 1: all of it. pp > 1: the busier of the first stage (its layers for every in-flight
    micro-batch) and the last (its layers for one micro-batch, plus the logits)."""
    terms = {"layers_on_gpu": acts.layers_on_gpu, "layer_bytes": acts.kept_layer_bytes,
             "in_flight": acts.in_flight_micro_batches, "logits_bytes": acts.non_layer_bytes}
    note = f"per layer: {KEPT[job.recompute]}"
    source = ACTIVATION_SOURCES[job.activation_model]
    if job.parallel.pp == 1:
        return component("activations", "layers_on_gpu * layer_bytes * in_flight + logits_bytes",
                         source, note, **terms)
    return component("activations", "max(layers_on_gpu * layer_bytes * in_flight, "
                     "layers_on_gpu * layer_bytes + logits_bytes)", source,
                     note + "; the busier of the first and last pipeline stage", **terms)


def training_estimate(job: Job) -> Estimate:
    states = (model_state.weights(job), model_state.gradients(job), model_state.optimizer(job))
    acts = activation_breakdown(job)
    tensors = (*states, activations_component(job, acts), temporary(job, acts))
    comps = (*tensors, overhead(job, sum(c.bytes for c in tensors)))
    trainable = (parameter_count(job.arch) if job.trains_all_weights
                 else lora_params(job.arch, job.lora_rank, job.lora_targets))
    scale = job.param_scale
    return Estimate(
        job=job, components=comps,
        params_total=round(parameter_count(job.arch) * scale),
        params_active=round(active_parameter_count(job.arch) * scale),
        params_trainable=round(trainable * (scale if job.trains_all_weights else 1.0)),
        cpu_offload_bytes=model_state.offloaded_bytes(job),
        details={"activation_per_layer_bytes": acts.per_layer_bytes,
                 "activation_non_layer_bytes": acts.non_layer_bytes,
                 "pipeline_in_flight": acts.in_flight_micro_batches,
                 "grad_accum": job.grad_accum})
