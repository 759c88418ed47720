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

from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import Any

from service.core.job.spec import Job
from service.core.memory import model_state, transients
from service.core.memory.activations import (
    ITEMIZED_PROFILES,
    ActivationBreakdown,
    activations_component,
)
from service.core.memory.formula import Component, component
from service.core.memory.regime import Regime, regime_of, states_framework
from service.core.recent import Recent

PERSISTENT_GRADS = ("deepspeed", "megatron")
RECENT_STATES = 256  # step states of recent jobs kept per process (a few kB each)
# Job fields no step state reads: the activation knobs, serving's, the GPU and the overhead's
# (tests/test_training_memory.py holds the shared states to freshly computed ones)
NOT_READ_BY_STEP_STATES = frozenset({
    "seq_len", "micro_batch", "global_batch", "recompute", "flash_attn", "chunked_loss",
    "activation_model", "batch", "kv_cache_dtype", "gpu", "overhead_model",
    "cuda_context_bytes", "allocator_reserve"})


@dataclass(frozen=True, slots=True)
class Phase:
    name: str
    components: tuple[Component, ...]
    bytes: int = field(init=False)  # the components' sum, read many times

    def __post_init__(self) -> None:
        object.__setattr__(self, "bytes", sum([c.bytes for c in self.components]))


def gradients_persist(job: Job) -> bool:
    return states_framework(job) in PERSISTENT_GRADS or job.grad_accum > 1


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


def phase_base(job: Job) -> tuple[Component, ...]:
    """What every phase holds: the weights, the optimizer state, ZeRO-3's gathered layers and,
    for DPO-like objectives, the reference model (the planner's lower bound is their sum)."""
    base = (model_state.weights(job), model_state.optimizer(job),
            transients.gathered_layers(job))
    reference = model_state.reference_weights(job)
    return (*base, reference) if reference.bytes else base


@dataclass(frozen=True, slots=True)
class StepStates:
    """The components of a step that do not depend on its activation knobs (recompute,
    micro-batch, global batch, activation profile): the planner computes them once per
    parallel layout and reuses them (``planning/layout_totals.py``)."""

    regime: Regime
    base: tuple[Component, ...]  # held in every phase
    gradients: Component
    autocast_cache: Component
    layer_copies: Component
    buckets: Component
    step_temporaries: Component
    embedding_gradient: Component | None  # None with adapters: no embedding backward
    partial_gradients: Component  # every gradient but the first layer's
    head_gradient: Component  # the LM head's, the backward's first


def step_states(job: Job, base: tuple[Component, ...] | None = None) -> StepStates:
    """``base``: the job's ``phase_base`` when the caller has it."""
    regime = regime_of(job)
    grads = model_state.gradients(job)
    return StepStates(
        regime, base or phase_base(job), grads,
        transients.autocast_cache(job, regime), transients.layer_weight_copies(job, regime),
        transients.gradient_buckets(job), transients.step_temporaries(job),
        None if regime.adapters else transients.embedding_gradient(job, regime),
        _partial_gradients(job, grads), transients.lm_head_gradient(job))


step_states_key = attrgetter(*(f.name for f in fields(Job)
                               if f.name not in NOT_READ_BY_STEP_STATES))
"""The job's fields that step states read: jobs with the same key have the same states."""
_recent_states: Recent[Any, StepStates] = Recent(RECENT_STATES)


def shared_step_states(job: Job) -> StepStates:
    """``step_states`` of the job, shared by the jobs that differ only in what no step state
    reads (a new sequence length or micro-batch on the same model and layout): the model
    states, worked out once and reused, the RECENT_STATES most recent kept."""
    key = step_states_key(job)
    found = _recent_states.get(key)
    return found if found is not None else _recent_states.put(key, step_states(job))


def training_phases(job: Job, acts: ActivationBreakdown,
                    states: StepStates | None = None) -> tuple[Phase, ...]:
    st = states or step_states(job)
    regime, base, grads = st.regime, st.base, st.gradients
    persist = gradients_persist(job)
    live_grads = (grads,) if persist else ()
    activations = activations_component(job, acts)
    if job.activation_model not in ITEMIZED_PROFILES:
        # closed-form activation models (Korthikanti, the S3 seed): one layer's recompute
        working = component("temporary", "working_set", "the closed-form model's recompute",
                            working_set=acts.working_set_bytes)
        return (Phase("step", (*base, grads, activations, working)),)
    buffers = transients.layer_grad_buffers(job, regime)
    layer_copies, buckets = st.layer_copies, st.buckets
    phases = [
        Phase("forward end", (*base, *live_grads, st.autocast_cache,
                              activations, transients.loss_forward(job))),
        Phase("backward start", (*base, *live_grads, transients.saved_weight_copies(
                                     job, regime, st.autocast_cache),
                                 activations, transients.loss_backward(job))),
        Phase("backward, first layers", (*base, grads if persist else st.partial_gradients,
                                         _first_layer(job, acts, regime), layer_copies, buffers,
                                         buckets)),
        Phase("optimizer step", (*base, grads, st.step_temporaries)),
    ]
    if job.recompute == "full":
        top = component("temporary", "top_layer_recomputed", "full recompute of the top layer",
                        top_layer_recomputed=acts.per_layer_bytes)
        phases.append(Phase("backward, top layer", (
            *base, grads if persist else st.head_gradient,
            activations, top, layer_copies, buffers, buckets)))
    if st.embedding_gradient is not None:
        phases.append(Phase("embedding backward", (*base, grads, st.embedding_gradient)))
    return tuple(phases)


def peak_phase(phases: tuple[Phase, ...]) -> Phase:
    return max(phases, key=lambda p: p.bytes)
