"""Given GPUs that fall short: the changes that make the job fit, in the order an engineer
tries them, each with what it costs.

1. knobs on the same GPUs: micro-batch 1 with accumulation (the global batch stays), recompute,
   a higher ZeRO/FSDP stage, model parallelism the stack runs, an 8-bit optimizer, LoRA on a
   4-bit base (QLoRA), a chunked loss where the logits dominate, the frozen base offloaded to CPU
   for adapters (FSDP-QLoRA), optimizer offload, parameter offload;
2. more GPUs of the same type (whole nodes): first with the job changes above (QLoRA, 8-bit
   AdamW, a chunked loss) when they take fewer GPUs, then as the job is;
3. other GPU types the team has (``fleet``), cheapest per hour first.
The knobs that cost neither quality nor much speed (micro-batch, recompute, ZeRO stage, model
parallelism) carry over: a later step that does not fit alone is tried on top of them, the way
an engineer keeps micro-batch 1 when adding QLoRA. CPU offload, the slowest knob (x1.5-4 a step),
is tried after the job changes that cost little (an 8-bit optimizer, QLoRA, a chunked loss). The
first change that fits is the fix; the answer names it and the next best two.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace

from service.core.hardware.gpus import Gpu
from service.core.job.choices import optimizer_name
from service.core.job.resolve import ResolvedJob
from service.core.job.spec import Job
from service.core.memory.model_state import offloaded_bytes
from service.core.planning.fleet_moves import FleetFit, fleet_moves
from service.core.planning.layouts import (
    SearchSpace,
    context_parallel_sizes,
    node_count,
    tensor_parallel_sizes,
)
from service.core.planning.plan_types import SHOWN_FIXES, Candidate, Fix, hourly_price
from service.core.planning.search import Searcher, fewest, states_lower_bound
from service.core.planning.search_setup import make_searcher
from service.core.planning.shape_tables import shape_probes
from service.core.planning.stacks import (
    model_parallelism,
    recomputes,
    stated_stack,
    zero_stages,
)
from service.core.units import counted, gb

# Suggest a chunked loss when the loss's fp32 logits buffers are this share of the budget (below
# it the kernel saves less than the band of the estimate, error_band.py, is wide), or when they
# alone are more than the job is short: then the kernel closes the gap by itself.
LOSS_SHARE_FOR_CHUNKING = 0.15

SpaceChange = Callable[[SearchSpace], SearchSpace]
JobChange = Callable[[ResolvedJob], ResolvedJob]


@dataclass(frozen=True, slots=True)
class Step:
    """One change an engineer tries: to the search space (a knob) or to the job itself."""

    what: str
    changes: dict[str, str | int | float | bool]
    cost: str
    space: SpaceChange | None = None
    job: JobChange | None = None
    carries: bool = False  # later steps build on it


@dataclass(slots=True)
class _Trials:
    """Searches of the job with some steps applied, on ``count`` GPUs of ``gpu``."""

    resolved: ResolvedJob
    gpu: Gpu
    count: int
    searchers: dict[tuple[str, ...], Searcher] = field(default_factory=dict)

    def searcher(self, steps: list[Step]) -> Searcher:
        key = tuple(s.what for s in steps if s.job is not None)
        found = self.searchers.get(key)
        if found is None:
            resolved = self.resolved
            for step in steps:
                if step.job is not None:
                    resolved = step.job(resolved)
            found = self.searchers[key] = make_searcher(resolved, self.gpu)
        return found

    def best(self, steps: list[Step]) -> Candidate | None:
        base = self.searcher(steps)
        space = base.space
        for step in steps:
            if step.space is not None:
                space = step.space(space)
        return Searcher(space, base.memory, base.budget, base.virtual_stages,
                        probes=shape_probes(space)).at(self.count).best


def _with_job(change: Callable[[ResolvedJob], Job], field_name: str) -> JobChange:
    def apply(resolved: ResolvedJob) -> ResolvedJob:
        return replace(resolved, job=change(resolved), stated=resolved.stated | {field_name})
    return apply


def _only_zero(stage: int) -> SpaceChange:
    return lambda s: replace(s, zero_stages=(stage,), zero_stated=False)


def knob_steps(resolved: ResolvedJob) -> Iterator[Step]:
    """The knobs of the same GPUs, in the order they are tried."""
    job, pinned = resolved.job, resolved.pinned
    stack = stated_stack(resolved)
    if pinned("micro_batch") and job.micro_batch > 1:
        batch = job.global_batch or job.micro_batch * job.parallel.dp * job.grad_accum
        yield Step(f"micro-batch 1 with accumulation (global batch {batch} kept)",
                   {"micro_batch": 1, "global_batch": batch},
                   "the same samples per step in smaller passes: GPUs a little less busy",
                   lambda s: replace(s, micro_batches=(1,), global_batch=batch), carries=True)
    if pinned("recompute") and job.recompute != "full":
        yield Step("activation recompute", {"recompute": "full"},
                   "the forward runs again in the backward",
                   lambda s: replace(s, recomputes=recomputes(resolved)), carries=True)
    if pinned("zero_stage"):  # each stage above the stated one, the least sharding first
        for stage in (z for z in zero_stages(resolved) if z > job.parallel.zero_stage):
            yield Step(f"ZeRO-{stage}" + (" / FSDP full sharding" if stage == 3 else ""),
                       {"zero_stage": stage}, "more communication per step",
                       _only_zero(stage), carries=True)
    runs = model_parallelism(resolved)
    if runs.tp or runs.pp or runs.cp:
        for knob, free in (
                ("tp", lambda s: replace(s, tps=tensor_parallel_sizes(s.arch, s.nvlink_domain))),
                ("pp", lambda s: replace(s, pps=None)),
                ("cp", lambda s: replace(s, cps=context_parallel_sizes(s.seq_len)))):
            if pinned(knob) and getattr(runs, knob):
                yield Step(f"another {knob.upper()} size", {}, "a different split", free,
                           carries=True)
    # adapters: the optimizer state is small and QLoRA beats streaming the base from the CPU
    if not pinned("offload") and job.trains_all_weights and (stack is None or stack.offload):
        # offload is DeepSpeed's: data parallelism with ZeRO (stacks.py)
        # a stated Trainer stack keeps its framework (offload runs through its DeepSpeed
        # integration, and the fix's figures are the Trainer's); otherwise DeepSpeed runs it
        to_deepspeed: dict[str, str | int | float | bool] = \
            {} if stack is not None and stack.id == "hf" else {"framework": "deepspeed"}
        yield Step("optimizer offload to CPU (ZeRO-Offload)",
                   {"offload": "optimizer", **to_deepspeed},
                   "the optimizer step runs on the CPU over PCIe",
                   lambda s: replace(s, tps=(1,), pps=(1,), cps=(1,), offloads=("optimizer",),
                                     zero_stages=tuple(z for z in s.zero_stages if z >= 1)
                                     or (1,), zero_stated=False))
        yield Step("optimizer and parameter offload (ZeRO-Infinity)",
                   {"offload": "optimizer_and_params", "zero_stage": 3, **to_deepspeed},
                   "weights stream from the CPU every step: slow",
                   lambda s: replace(s, tps=(1,), pps=(1,), cps=(1,),
                                     offloads=("optimizer_and_params",), zero_stages=(3,),
                                     zero_stated=False))


def chunking_helps(logits_bytes: int, budget: int, shortfall: int | None) -> bool:
    """Whether a chunked loss is worth trying at the leanest layout (``LOSS_SHARE_FOR_CHUNKING``)."""
    if logits_bytes <= 0 or budget <= 0:
        return False
    return logits_bytes >= LOSS_SHARE_FOR_CHUNKING * budget or \
        (shortfall is not None and 0 < shortfall <= logits_bytes)


def job_steps(resolved: ResolvedJob, chunking: bool) -> Iterator[Step]:
    """Changes to the job itself (optimizer, method, loss kernel); each carries over, so the
    chunked loss is also tried on top of QLoRA."""
    job = resolved.job
    # bitsandbytes optimizers run with data parallelism alone (choices.check_recipe), in the
    # Trainer or DeepSpeed: Megatron-LM and FSDP2 build their own optimizers (stacks.py)
    model_parallel = job.parallel.tp * job.parallel.pp * job.parallel.cp * job.parallel.ep > 1
    own_optimizer = resolved.pinned("framework") and job.framework in ("megatron", "fsdp")
    if job.trains_all_weights and optimizer_name(job.optimizer).family == "adamw" \
            and not model_parallel and not own_optimizer:
        yield Step("8-bit AdamW (bitsandbytes)", {"optimizer": "adamw_8bit"},
                   "optimizer state in 8 bits: on par with 32-bit Adam in the bitsandbytes paper",
                   job=_with_job(lambda r: replace(r.job, optimizer="adamw_8bit"), "optimizer"),
                   carries=True)
    unsaid_full = job.task == "finetune" and job.finetune_method == "full" \
        and not resolved.pinned("finetune_method")
    if unsaid_full:  # "is 24gb enough to finetune a 7b": the method was not said
        yield Step("LoRA (rank 16) instead of a full fine-tune", {"finetune_method": "lora"},
                   "adapters train, the base is frozen: close to a full fine-tune for "
                   "instruction tuning (LoRA paper), weaker at learning new knowledge (Biderman "
                   "et al. 2024, 'LoRA Learns Less and Forgets Less')",
                   job=_with_job(lambda r: replace(r.job, finetune_method="lora"),
                                 "finetune_method"), carries=True)
    if job.finetune_method == "lora" or unsaid_full:
        yield Step("QLoRA: LoRA on a 4-bit NF4 base",
                   {"finetune_method": "qlora", "quantization": "nf4"},
                   "NF4 base: on par with 16-bit LoRA in the QLoRA paper; ~30% slower steps",
                   job=_with_job(lambda r: replace(r.job, finetune_method="qlora",
                                                   quantization="nf4"), "finetune_method"),
                   carries=True)
    if not job.chunked_loss and chunking:
        yield Step("a chunked loss (fused linear cross-entropy, e.g. Liger Kernel)",
                   {"chunked_loss": True}, "no quality cost; the fp32 logits are never whole",
                   job=_with_job(lambda r: replace(r.job, chunked_loss=True), "chunked_loss"),
                   carries=True)
    if not job.trains_all_weights and not resolved.pinned("offload"):
        # Answer.AI's FSDP-QLoRA recipe (70B on two 24 GB cards): FSDP CPUOffload keeps the
        # sharded base in CPU memory, the GPUs hold the adapters and one gathered layer
        yield Step("the frozen base offloaded to CPU (FSDP CPUOffload, as in FSDP-QLoRA)",
                   {"offload": "optimizer_and_params", "zero_stage": 3},
                   "the base streams from the CPU every step: slow",
                   lambda s: replace(s, offloads=("optimizer_and_params",), zero_stages=(3,),
                                     zero_stated=False))


def _fix(steps: list[Step], found: Candidate, trials: _Trials) -> Fix:
    # a carried knob the layout found did not take is not part of the fix ("+ activation
    # recompute" beside a layout that recomputes nothing)
    lay = found.layout
    steps = [s for s in steps if not (s.changes.get("recompute") and lay.recompute == "none")
             and not ("micro_batch" in s.changes and lay.micro_batch != s.changes["micro_batch"])]
    what = " + ".join(s.what for s in steps)
    changes: dict[str, str | int | float | bool] = {}
    for step in steps:
        changes.update(step.changes)
    note = "; ".join(s.cost for s in steps) + f"; step time x{found.step_time:.2f} " \
        f"({found.slowdowns()})"
    if found.layout.offload != "none":
        memory = trials.searcher(steps).memory
        note += f"; {gb(offloaded_bytes(memory.job(found.layout)))} of CPU memory per GPU"
    return Fix(f"{what}: {found.layout.describe()}", trials.count, trials.gpu.id,
               found.total_bytes, note, "knob", changes)


def _first_fit(step: Step, carried: list[Step], trials: _Trials
               ) -> tuple[list[Step], Candidate] | None:
    """The step alone, else on top of the cheap knobs carried, else on top of every step
    carried."""
    cheap = [c for c in carried if c.job is None]
    tries = [[step]]
    for base in (cheap, carried):
        if base and [*base, step] not in tries:
            tries.append([*base, step])
    for used in tries:
        found = trials.best(used)
        if found is not None:
            return used, found
    return None


def fixes_for(resolved: ResolvedJob, gpu: Gpu, count: int, min_gpus: int | None,
              fleet: tuple[Gpu, ...], chunking: bool) -> tuple[Fix | None, list[Fix]]:
    """The fix and the next best two for ``count`` GPUs of ``gpu`` that fall short;
    ``chunking``: a chunked loss is worth trying (``chunking_helps``)."""
    trials = _Trials(resolved, gpu, count)
    fixes: list[Fix] = []
    carried: list[Step] = []
    knobs = list(knob_steps(resolved))
    # CPU offload (x1.5-4 a step) after the job changes that cost little or nothing: an 8-bit
    # optimizer, QLoRA, a chunked loss
    cheap_knobs = [s for s in knobs if "offload" not in s.changes]
    offloads = [s for s in knobs if "offload" in s.changes]
    for step in [*cheap_knobs, *job_steps(resolved, chunking), *offloads]:
        hit = _first_fit(step, carried, trials)
        if hit is not None:
            fixes.append(_fix(*hit, trials))
        if step.carries:
            carried.append(step)
    if len(fixes) >= SHOWN_FIXES:  # the answer shows no more: more GPUs are not searched
        return fixes[0], fixes[1:SHOWN_FIXES]
    if min_gpus is not None:
        fixes += _fewer_more_gpus(resolved, gpu, count, min_gpus, carried)
        fixes.append(Fix(f"{min_gpus}x {gpu.name} instead of {count}", min_gpus, gpu.id, None,
                         f"+{counted(min_gpus - count, 'GPU')}; {hourly_price(gpu, min_gpus)}",
                         "more_gpus", {"gpu_count": min_gpus}))
    if len(fixes) < SHOWN_FIXES:  # other GPU types only when the answer has room for them
        fixes += other_gpus(resolved, gpu, fleet, min_gpus or count)
    return (fixes[0] if fixes else None), fixes[1:SHOWN_FIXES]


def _fewer_more_gpus(resolved: ResolvedJob, gpu: Gpu, count: int, min_gpus: int,
                     carried: list[Step]) -> list[Fix]:
    """More GPUs of the type with the job changes that carry (8-bit AdamW, QLoRA, a chunked
    loss) applied, when that takes fewer GPUs than the job as it is: Gemma-3-27B QLoRA needs 24
    RTX 4090s for its fp32 logits, 2 with a chunked loss."""
    changes = [s for s in carried if s.job is not None]
    if not changes:
        return []
    changed = resolved
    for step in changes:
        assert step.job is not None
        changed = step.job(changed)
    searcher = make_searcher(changed, gpu)
    hit, _ = fewest(searcher, states_lower_bound(searcher.memory, searcher.budget),
                    with_miss=False, ceiling=min_gpus - 1)
    if hit is None or hit.best is None or hit.best.layout.gpus <= count:
        return []
    gpus = hit.best.layout.gpus
    what = " + ".join(s.what for s in changes)
    fields: dict[str, str | int | float | bool] = {"gpu_count": gpus}
    for step in changes:
        fields.update(step.changes)
    return [Fix(f"{gpus}x {gpu.name} instead of {count}, with {what}: "
                f"{hit.best.layout.describe()}", gpus, gpu.id, hit.best.total_bytes,
                f"+{counted(gpus - count, 'GPU')}; {'; '.join(s.cost for s in changes)}; "
                f"{hourly_price(gpu, gpus)}", "more_gpus", fields)]


def other_gpus(resolved: ResolvedJob, gpu: Gpu, fleet: tuple[Gpu, ...], gpus: int) -> list[Fix]:
    """The fleet's other GPU types on which the job fits (``fleet_moves``)."""
    nodes = max(1, node_count(gpus, gpu.gpus_per_node))

    def fit_on(other: Gpu) -> FleetFit | None:
        searcher = make_searcher(resolved, other)
        # a move is offered in no more nodes than the fix on this GPU type: nothing above
        hit, _ = fewest(searcher, states_lower_bound(searcher.memory, searcher.budget),
                        with_miss=False, ceiling=nodes * searcher.space.gpus_per_node)
        if hit is None or hit.best is None:
            return None
        return FleetFit(hit.best.layout.gpus, searcher.space.gpus_per_node,
                        hit.best.layout.describe(), hit.best.total_bytes)

    return fleet_moves(gpu, fleet, gpus, fit_on)
