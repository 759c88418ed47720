"""The peak of a training step: the largest of what is live at each of its phases.

Weights, optimizer state and (when they persist) gradients are live throughout; the saved
activations peak at the end of the forward; the loss's fp32 logits buffers peak at the start
of the backward; gradients fill in during the backward while activations are freed; the
optimizer step adds its own temporaries. Gradients persist between steps when a framework
keeps them in buffers (DeepSpeed, Megatron-LM) or accumulation spans micro-batches; otherwise
``zero_grad(set_to_none=True)`` frees them (Hugging Face Trainer, FSDP2).
Checked against peak memory measured on an H100 (``bench/gpu_accuracy.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

from service.core.job.spec import Job
from service.core.memory import model_state, transients
from service.core.memory.activations import (
    ITEMIZED_PROFILES,
    ActivationBreakdown,
    activations_component,
)
from service.core.memory.formula import Component, component
from service.core.memory.regime import Regime, regime_of

PERSISTENT_GRADS = ("deepspeed", "megatron")


@dataclass(frozen=True, slots=True)
class Phase:
    name: str
    components: tuple[Component, ...]

    @property
    def bytes(self) -> int:
        return sum(c.bytes for c in self.components)


def gradients_persist(job: Job) -> bool:
    return job.framework in PERSISTENT_GRADS or job.grad_accum > 1


def _first_layer(job: Job, acts: ActivationBreakdown, regime: Regime) -> Component:
    """In the backward of the first layers: one layer's saved tensors (recomputed under full
    recompute, on top of its checkpointed input), and under pipelining the other micro-batches
    in flight."""
    checkpoint = acts.kept_layer_bytes if job.recompute == "full" else 0.0
    others = acts.kept_layer_bytes * acts.layers_on_gpu * (acts.in_flight_micro_batches - 1)
    return component("activations", "layer_saved + checkpoint + other_micro_batches",
                     "saved tensors of one layer (saved_tensors.py)", "the first layers' backward",
                     layer_saved=acts.per_layer_bytes, checkpoint=checkpoint,
                     other_micro_batches=others)


def _partial_gradients(job: Job, full: Component) -> Component:
    """Every gradient but the first layer's at the end of the backward."""
    layers = -(-job.arch.layers // job.parallel.pp)
    return component("gradients", "all_gradients * (1 - 1 / layers)", full.source,
                     "all but the first layer's", all_gradients=full.bytes, layers=layers)


def training_phases(job: Job, acts: ActivationBreakdown) -> tuple[Phase, ...]:
    regime = regime_of(job)
    weights, grads = model_state.weights(job), model_state.gradients(job)
    optimizer = model_state.optimizer(job)
    workspace = transients.gathered_layers(job)
    base = (weights, optimizer, workspace)
    live_grads = (grads,) if gradients_persist(job) else ()
    activations = activations_component(job, acts)
    if job.activation_model not in ITEMIZED_PROFILES:
        # closed-form activation models (Korthikanti, the S3 seed): one layer's recompute
        working = component("temporary", "working_set", "the closed-form model's recompute",
                            working_set=acts.working_set_bytes)
        return (Phase("step", (*base, grads, activations, working)),)
    buffers = transients.layer_grad_buffers(job, regime)
    layer_copies = transients.layer_weight_copies(job, regime)
    buckets = transients.gradient_buckets(job)
    phases = [
        Phase("forward end", (*base, *live_grads, transients.autocast_cache(job, regime),
                              activations, transients.loss_forward(job))),
        Phase("backward start", (*base, *live_grads, transients.saved_weight_copies(job, regime),
                                 activations, transients.loss_backward(job))),
        Phase("backward, first layers", (*base, grads if gradients_persist(job) else
                                         _partial_gradients(job, grads),
                                         _first_layer(job, acts, regime), layer_copies, buffers,
                                         buckets)),
        Phase("optimizer step", (*base, grads, transients.step_temporaries(job))),
    ]
    if job.recompute == "full":
        top = component("temporary", "top_layer_recomputed", "full recompute of the top layer",
                        top_layer_recomputed=acts.per_layer_bytes)
        phases.append(Phase("backward, top layer", (
            *base, grads if gradients_persist(job) else transients.lm_head_gradient(job),
            activations, top, layer_copies, buffers, buckets)))
    if not regime.adapters:
        phases.append(Phase("embedding backward", (
            *base, grads, transients.embedding_gradient(job, regime))))
    return tuple(phases)


def peak_phase(phases: tuple[Phase, ...]) -> Phase:
    return max(phases, key=lambda p: p.bytes)
