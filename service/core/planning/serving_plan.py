"""Serving plans: the fewest GPUs for weights plus the KV cache, and concurrency on N GPUs.

Budgeted the way vLLM sizes its KV cache (``serving.kv_budget_bytes``): gpu_memory_utilization x
usable memory, minus the weights, the forward pass's activation peak, non-torch memory (CUDA
context, NCCL) and captured CUDA graphs; what is left holds whole sequences of KV cache.
Layouts: tensor parallelism inside one node, or across a rack-scale NVLink domain (GB200 NVL72,
``layouts.nvlink_tp_domain``), by vLLM's head rule (``model/tensor_parallel.py``), and pipeline
parallelism over the rest (vLLM ``pipeline_parallel_size``), each stage holding layers / pp of
the weights and of the KV cache: on each count the largest TP that fits, and a smaller TP with
PP where TP past the KV heads would copy the cache. Where one engine would need pipeline stages
or span nodes but data-parallel replicas of a smaller engine also serve the sequences (each its
share), the replicas (vLLM ``--data-parallel-size``): no pipeline bubbles, no inter-node traffic.
The count is the fewest GPUs, not the highest throughput.
"""

from __future__ import annotations

from dataclasses import replace

from service.core.hardware.gpus import Gpu
from service.core.job.assumptions import Assumption, default, said_or_default
from service.core.job.resolve import ResolvedJob
from service.core.job.spec import Job, Parallelism
from service.core.memory.serving import LLAMACPP, ServingBudget, serving_weights
from service.core.memory.serving_memory import serving_estimate
from service.core.planning.plan_types import Alternative, Fix, Plan, ServingFit
from service.core.planning.serving_fixes import (
    budget_fix,
    engine_fix,
    said_first,
    serving_fixes,
    with_engine_fix,
)
from service.core.planning.serving_shapes import (
    NOTHING_STATED,
    StatedShape,
    deployable_engine,
    evaluate,
    expert_parallel_ok,
    for_fewest,
    serving_tp_limit,
    shapes,
    stated_expert_layout,
    stated_shape,
)
from service.core.units import counted, gb

MAX_SERVING_GPUS = 4096
NEAR_MOST = 0.95  # "about the most sequences", between layouts an operator would choose from


def serving_budget(resolved: ResolvedJob) -> ServingBudget:
    """vLLM's gpu_memory_utilization (0.90) unless stated; Hugging Face ``generate`` reserves
    nothing ahead, so it plans to the planner's headroom; llama.cpp neither (``LLAMACPP``)."""
    if resolved.job.framework == "llamacpp":
        return replace(LLAMACPP, memory_fraction=resolved.headroom)
    if resolved.pinned("memory_headroom") or resolved.job.framework == "hf":
        return ServingBudget(memory_fraction=resolved.headroom)
    return ServingBudget()


def best_shape(job: Job, gpu: Gpu, gpus: int, per_node: int, budget: ServingBudget,
               stated: StatedShape = NOTHING_STATED, prune: bool = True) -> ServingFit | None:
    """On ``gpus``: of the layouts that fit, engines inside a node without pipeline stages
    first, then the smallest engine (the most replicas: tensor parallelism to hold the model,
    data parallelism for the load, as vLLM's parallelism guide advises); where no concurrency
    was stated (how many fit?), of those without stages, the ones within 5% of the most
    sequences; when none fits, the
    layout with the most room. Replicas are node-aligned. What the request fixed stays
    (``StatedShape``).

    ``prune``: an engine whose even share of the weights alone fills the budget has no room
    for a sequence (each GPU holds at least that share: ``serving_weights``), so it is not
    evaluated; where nothing has room, every layout is, for the least short."""
    limit = serving_tp_limit(gpu, per_node)
    if stated.ep is not None:  # the stated expert parallelism is the layout
        split = stated_expert_layout(job, gpus, stated)
        return None if split is None else evaluate(job, gpu, *split, per_node, budget, stated.ep,
                                                   expert_parallel=True)
    evaluated: list[ServingFit] = []
    ceiling = round(gpu.memory_bytes_usable * budget.memory_fraction)
    whole = serving_weights(job.arch, job.quantization, job.param_scale).bytes if prune else 0
    pruned = False
    for replicas in [r for r in range(1, gpus + 1) if gpus % r == 0] if stated.replicas else [1]:
        for size, pp in shapes(job, gpus // replicas, limit, stated.tp):
            if stated.pp is not None and pp != stated.pp:
                continue
            engine = size * pp
            if replicas > 1 and per_node % engine and engine % per_node:
                continue  # a replica straddling two nodes: no better than one engine
            if stated.deployable and not deployable_engine(engine, per_node):
                continue
            if prune and whole > ceiling * engine:
                pruned = True
                continue
            evaluated.append(evaluate(job, gpu, size, pp, per_node, budget, replicas))
    if expert_parallel_ok(job, gpus, per_node, stated) and (
            not stated.deployable or deployable_engine(gpus, per_node)):
        evaluated.append(evaluate(job, gpu, 1, 1, per_node, budget, gpus, expert_parallel=True))
    fitting = [f for f in evaluated if f.fits]
    misses = [f for f in evaluated if not f.fits]
    roomiest = max(misses, key=lambda f: f.max_concurrent) if misses else None
    if fitting:
        # engines inside a node without pipeline stages, where any fits
        kind = min(_preference(f, per_node)[:3] for f in fitting)
        fitting = [f for f in fitting if _preference(f, per_node)[:3] == kind]
    if fitting and stated.capacity:  # how many fit: the one an operator would run of those
        fitting = _near_most(fitting)
    if fitting:
        return min(fitting, key=lambda f: _preference(f, per_node))
    if pruned and (roomiest is None or roomiest.max_concurrent == 0):
        return best_shape(job, gpu, gpus, per_node, budget, stated, prune=False)
    if roomiest is None:
        return None
    if roomiest.max_concurrent == 0:  # the weights leave no room anywhere: the least short
        return max(misses, key=lambda f: f.kv_budget_bytes)
    # none fits: the one an operator would run of those with about the most room
    return min(_near_most(misses), key=lambda f: _preference(f, per_node))


def _near_most(fits: list[ServingFit]) -> list[ServingFit]:
    """The layouts within 5% of the most sequences: no operator trades a simpler layout for
    a few more."""
    most = max(f.max_concurrent for f in fits)
    return [f for f in fits if f.max_concurrent >= NEAR_MOST * most]


def _preference(fit: ServingFit, per_node: int) -> tuple[bool, bool, bool, int]:
    """Lower is better: an engine inside one node, no pipeline stages, an engine over nodes
    with tensor parallelism over each whole node (vLLM's parallelism guide: TP inside a node,
    PP across nodes; DeepSeek-V3 in bf16 on 24 H100s had been TP=1 x PP=24 for the KV room its
    MLA cache keeps that way), the fewest GPUs per engine (the most replicas). Data-parallel
    attention with expert parallelism is one engine over all its GPUs: at equal size TP, found
    first, wins (each token reads the attention and dense weights split tp ways, not whole on
    one rank)."""
    engine = fit.gpus if fit.expert_parallel else fit.tp * fit.pp
    thin = engine > per_node and not fit.expert_parallel and fit.tp < per_node
    return engine > per_node, fit.pp > 1, thin, engine


def counts(per_node: int) -> list[int]:
    """Every count inside one node, then whole nodes: 3 replicas of one GPU are deployed; a
    6-GPU engine only where 6 are what the user has (6 A100s serve a 64-head model as TP=2 x
    PP=3), not in the search for the fewest (``for_fewest``)."""
    out = list(range(1, per_node + 1))
    nodes = 2
    while nodes * per_node <= MAX_SERVING_GPUS:
        out.append(nodes * per_node)
        nodes += 1
    return out


def fewest_serving(job: Job, gpu: Gpu, per_node: int, budget: ServingBudget,
                   stated: StatedShape = NOTHING_STATED
                   ) -> tuple[ServingFit | None, ServingFit | None]:
    """(first layout that fits, the one just below it), of engines people deploy
    (``for_fewest``); what the request fixed stays."""
    stated = for_fewest(stated)
    miss: ServingFit | None = None
    for count in counts(per_node):
        fit = best_shape(job, gpu, count, per_node, budget, stated)
        if fit is None:
            continue
        if fit.fits:
            return fit, miss
        if miss is None or fit.max_concurrent >= miss.max_concurrent:
            miss = fit  # the count below that came closest (7 replicas of a 70B hold nothing)
    return None, miss


def plan_serving(resolved: ResolvedJob, gpu: Gpu, fleet: tuple[Gpu, ...] = ()) -> Plan:
    """The fewest GPUs for the asked sequences, or the given count and, when it falls short,
    the fixes (``serving_fixes.py``); ``fleet``: the GPU types a fix may move to."""
    job = replace(resolved.job, gpu=gpu)
    per_node = resolved.gpus_per_node if resolved.pinned("gpus_per_node") else gpu.gpus_per_node
    budget = serving_budget(resolved)
    stated = stated_shape(resolved)
    count = resolved.given_gpus
    best, miss = fewest_serving(job, gpu, per_node, budget, stated)
    chosen: ServingFit | None = best
    if count is not None:
        chosen = best_shape(job, gpu, count, per_node, budget, stated)
    plan = Plan(task="infer", model_id=job.model_id, gpu=gpu,
                capacity_bytes=gpu.memory_bytes_usable,
                budget_bytes=round(gpu.memory_bytes_usable * budget.memory_fraction),
                headroom=budget.memory_fraction, fits=False, gpus_per_node=per_node,
                mode="given" if count is not None else "fewest", gpus=count,
                min_gpus=best.gpus if best else None, min_shape=best.shape() if best else None,
                assumptions=_assumptions(budget, gpu, job.framework == "llamacpp",
                                             resolved.pinned("memory_headroom")))
    if chosen is None:
        return plan
    estimate = serving_estimate(replace(job, batch=chosen.per_replica, parallel=Parallelism(
        tp=chosen.tp, pp=chosen.pp, ep=chosen.replicas if chosen.expert_parallel else 1)),
        budget)
    shortfall = None if chosen.fits else \
        chosen.kv_per_sequence_bytes * chosen.per_replica - chosen.kv_budget_bytes
    fix: Fix | None = None
    others: list[Fix] = []
    if not chosen.fits:
        fix, others = serving_fixes(
            job, gpu, chosen, plan.min_gpus, fleet,
            lambda j, g, tp, pp: evaluate(j, g, tp, pp, per_node, budget, chosen.replicas),
            lambda j, g: fewest_serving(j, g, g.gpus_per_node, budget, stated)[0])
        switch = None if resolved.pinned("framework") else \
            engine_fix(job, gpu, chosen.gpus, per_node, resolved.headroom)
        if switch is not None:
            fix, others = with_engine_fix(fix, others, switch)
        raised = budget_fix(resolved, job, gpu, chosen, per_node)
        if raised is not None:  # the engine's share is the cheapest change: said first
            fix, others = said_first(raised, fix, others)
    return replace(plan, gpus=chosen.gpus, fits=chosen.fits, serving=chosen, estimate=estimate,
                   stack=_serving_stack(resolved),
                   alternatives=_without_stages(job, gpu, chosen, per_node, budget, stated)
                   + _more_replicas(job, gpu, chosen, per_node, budget, stated)
                   + (_more_room(job, gpu, chosen, per_node, budget, stated)
                      if count is None else ()),
                   why=tuple(_why(chosen, miss if count is None else None, job, gpu, budget)),
                   shortfall_bytes=shortfall, fix=fix, other_fixes=tuple(others))


def _without_stages(job: Job, gpu: Gpu, chosen: ServingFit, per_node: int,
                    budget: ServingBudget, stated: StatedShape) -> tuple[Alternative, ...]:
    """Where the answer has pipeline stages inside a node, the fewest GPUs of that node that
    serve without them (a 7B at high concurrency: 7 GPUs as PP=7, or 8 as 2 replicas of TP=4):
    every token then passes one stage, not pp of them in turn."""
    if chosen.pp == 1 or not chosen.fits or chosen.gpus > per_node or stated.pp is not None:
        return ()
    for count in range(chosen.gpus + 1, per_node + 1):
        fit = best_shape(job, gpu, count, per_node, budget, stated)
        if fit is not None and fit.fits and fit.pp == 1:
            return (Alternative(fit.shape(), fit.gpus, fit.total_bytes, None,
                                f"no pipeline stages: each token passes one engine, not "
                                f"{chosen.pp} stages in turn (+{counted(fit.gpus - chosen.gpus, 'GPU')})"),)
    return ()


def _more_replicas(job: Job, gpu: Gpu, chosen: ServingFit, per_node: int,
                   budget: ServingBudget, stated: StatedShape) -> tuple[Alternative, ...]:
    """Where the answer to "how many fit" is a larger engine, the smaller engines with more
    replicas on the same GPUs: fewer sequences, no tensor-parallel traffic between them."""
    if not stated.capacity or not chosen.fits:
        return ()
    other = best_shape(job, gpu, chosen.gpus, per_node, budget, replace(stated, capacity=False))
    if other is None or not other.fits or other.replicas <= chosen.replicas:
        return ()
    why = ("each rank holds the attention and its share of the experts, and the KV cache of "
           "its own sequences: no pipeline stages, no tensor-parallel traffic"
           if other.expert_parallel else
           "each replica holds the weights again, but needs no tensor-parallel traffic")
    return (_holding_more(other, chosen, why),)


def _more_room(job: Job, gpu: Gpu, chosen: ServingFit, per_node: int,
               budget: ServingBudget, stated: StatedShape) -> tuple[Alternative, ...]:
    """"How many GPUs to serve X?" with no load said: the fewest that fit one sequence, and
    twice as many inside the node, where each GPU's share of the weights halves and what it
    frees holds KV cache (2 A100s hold a 72B model with room for 2 sequences; 4 for far more)."""
    if not stated.capacity or not chosen.fits or chosen.gpus * 2 > per_node:
        return ()
    fit = best_shape(job, gpu, chosen.gpus * 2, per_node, budget, stated)
    if fit is None or not fit.fits or fit.pp > 1 or fit.replicas != chosen.replicas \
            or fit.max_concurrent <= chosen.max_concurrent:
        return ()  # (more replicas of the same engine: twice the sequences, said by no one)
    return (_holding_more(fit, chosen, "each GPU's share of the weights halves, the KV cache "
                          f"gets the rest (+{counted(fit.gpus - chosen.gpus, 'GPU')})"),)


def _holding_more(fit: ServingFit, chosen: ServingFit, why: str) -> Alternative:
    """Another layout that holds more sequences than the one chosen, and why."""
    return Alternative(fit.shape(), fit.gpus, fit.total_bytes, None,
                       f"up to {fit.max_concurrent:,} sequences ({chosen.max_concurrent:,} as "
                       f"chosen): {why}")


def _serving_stack(resolved: ResolvedJob) -> str:
    """vLLM unless the request named SGLang, llama.cpp or Hugging Face ``generate``."""
    return resolved.job.framework if resolved.job.framework in ("hf", "sglang", "llamacpp") \
        else "vllm"


def _assumptions(budget: ServingBudget, gpu: Gpu, llamacpp: bool = False, said: bool = False
                 ) -> tuple[Assumption, ...]:
    if llamacpp:
        return (
            said_or_default("memory_headroom", budget.memory_fraction, said,
                            f"llama.cpp reserves nothing ahead: {budget.memory_fraction:.0%} of "
                            f"{gb(gpu.memory_bytes_usable)} minus weights, a compute buffer for "
                            f"{budget.batched_tokens(gpu):,} tokens (n_ubatch) and "
                            f"{gb(budget.non_torch_bytes)} of CUDA context", "llama.cpp llama-server"),
            default("plan.layout", "layers split over the GPUs", "llama.cpp --split-mode layer "
                    "(its default): each GPU holds its layers' weights and KV cache", minor=True),
        )
    return (
        said_or_default("memory_headroom", budget.memory_fraction, said,
                        f"vLLM-style budget: gpu_memory_utilization {budget.memory_fraction:.0%} of "
                        f"{gb(gpu.memory_bytes_usable)}, minus weights, activation peak "
                        f"({budget.batched_tokens(gpu):,} batched tokens), {gb(budget.non_torch_bytes)} "
                        f"non-torch memory and {gb(budget.cuda_graph_bytes)} CUDA graphs",
                        "vLLM worker memory profiling"),
        default("plan.layout", "TP in a node, PP over the rest", "tensor parallelism inside one "
                "node (over PCIe where the GPU has no NVLink) or one rack-scale NVLink domain, "
                "the largest that fits; pipeline parallelism over the rest, or data-parallel "
                "replicas where one engine would need pipeline stages or span nodes",
                minor=True),
        default("plan.kv_cache", "every sequence at the full context", "users read as "
                "sequences in flight at once, each at the full context: an upper bound (paged "
                "KV blocks hold shorter sequences in less)"),
    )


def _why(fit: ServingFit, miss: ServingFit | None, job: Job, gpu: Gpu,
         budget: ServingBudget) -> list[str]:
    kv_dtype = "16-bit" if job.kv_cache_dtype == "auto" else job.kv_cache_dtype
    lines = [
        f"weights {gb(fit.weights_bytes)} per GPU ({job.quantization}, split "
        f"{fit.tp * fit.pp} ways" + (f", x {fit.replicas} replicas" if fit.replicas > 1 else "")
        + ")",
        f"KV cache {gb(fit.kv_per_sequence_bytes)} per sequence per GPU at "
        f"{job.seq_len:,} tokens ({kv_dtype} KV); {fit.per_replica} sequences"
        + (f" per replica ({fit.sequences} in all)" if fit.replicas > 1 else "")
        + f" need {gb(fit.kv_per_sequence_bytes * fit.per_replica)}",
        f"room for sequences {gb(fit.kv_budget_bytes)} per GPU = {budget.memory_fraction:.0%} x "
        f"{gb(gpu.memory_bytes_usable)} - weights - {gb(fit.fixed_bytes)} that does not grow "
        "with the sequences (working set, non-torch memory, CUDA graphs)",
        f"up to {fit.max_concurrent:,} concurrent sequences at {job.seq_len:,} tokens on "
        f"{fit.gpus} GPU{'s' if fit.gpus > 1 else ''} ({fit.shape()})",
    ]
    if miss is not None:
        lines.append(f"fewer GPUs do not fit: on {miss.gpus} ({miss.shape()}) room for "
                     f"{miss.max_concurrent:,} sequences, {fit.sequences} asked")
    return lines
