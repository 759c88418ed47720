"""The S3 seed's GPU count, reproduced on request, with what it leaves out.

The seed divides *all* activations of the global batch evenly over N GPUs, next to its ZeRO
sharding of model states: per GPU = unsharded states + (sharded states + activations +
one block's working set) / N <= capacity. That is arithmetic, not a layout: data
parallelism splits whole sequences, so at most global_batch ranks can share activations, and
one sequence's activations must fit on the ranks that hold it. The planner answers what can
really run; this module only reproduces the seed's figures (924 / 427 / 278 / 15 / 8).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from service.core.job.spec import Job, Parallelism
from service.core.memory import model_state
from service.core.memory.activations import activation_breakdown


@dataclass(frozen=True, slots=True)
class EvenSplitCount:
    gpus: int | None  # None: the unsharded states alone do not fit
    unsharded_bytes: int
    shared_bytes: int  # sharded states + activations + working set, split over the GPUs
    caveat: str


def even_split_gpu_count(job: Job, capacity_bytes: int) -> EvenSplitCount:
    """Smallest N with unsharded + shared / N <= capacity (the S3 seed's method)."""
    single = replace(job, parallel=Parallelism())
    weights = model_state.weights(single).bytes
    grads = model_state.gradients(single).bytes
    opt = model_state.optimizer(single).bytes
    stage = job.parallel.zero_stage
    unsharded = {0: weights + grads + opt, 1: weights + grads, 2: weights, 3: 0}[stage]
    states = weights + grads + opt
    acts = activation_breakdown(single)
    shared = states - unsharded + acts.layers_bytes + acts.working_set_bytes
    room = capacity_bytes - unsharded
    gpus = math.ceil(shared / room) if room > 0 else None
    per_sequence = acts.layers_bytes // max(1, job.micro_batch)
    caveat = (
        f"divides activations of {job.micro_batch} sequences evenly over the GPUs; data "
        f"parallelism splits whole sequences, and one sequence alone keeps "
        f"{per_sequence / 1e9:,.1f} GB of activations"
    )
    return EvenSplitCount(gpus, unsharded, shared, caveat)
