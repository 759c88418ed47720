"""One serving layout on a GPU type: what the request fixed of it, the (tp, pp) shapes a count
allows, and a layout's per-GPU figures (``evaluate``), for the search in ``serving_plan.py``."""

from __future__ import annotations

from dataclasses import dataclass, replace

from service.core.hardware.gpus import Gpu
from service.core.job.resolve import ResolvedJob
from service.core.job.spec import Job
from service.core.memory.serving import ServingBudget
from service.core.memory.serving_split import serving_share
from service.core.model.tensor_parallel import expert_rank_tp, serving_tp_ok, serving_tp_sizes
from service.core.planning.layouts import node_count, nvlink_tp_domain
from service.core.planning.plan_types import ServingFit


@dataclass(frozen=True, slots=True)
class StatedShape:
    """What the request fixed of a serving layout: TP and PP sizes, and whether replicas may
    be run (llama.cpp splits layers over its GPUs in one server)."""

    tp: int | None = None
    pp: int | None = None
    replicas: bool = True
    capacity: bool = False  # no concurrency stated: the question is how many sequences fit
    ep: int | None = None  # a stated expert-parallel size (MoE): attention ranks sharing experts
    deployable: bool = False  # engines of the sizes people deploy (``deployable_engine``)


NOTHING_STATED = StatedShape()


def deployable_engine(gpus: int, per_node: int) -> bool:
    """An engine size people deploy: 1, 2, 4 or 8 GPUs in a node (cloud instances and vLLM's
    tensor-parallel sizes come in powers of two), or whole nodes; 3, 5, 6 or 7 GPUs as one
    engine (PP=7, TP=2 x PP=3) only where they are what someone has."""
    return (gpus <= per_node and gpus & (gpus - 1) == 0) or gpus % per_node == 0


def for_fewest(stated: StatedShape) -> StatedShape:
    """The search for the fewest GPUs: deployable engines, unless the request fixed the shape
    (a TP or PP size, or llama.cpp's layer split over whatever GPUs a home setup has)."""
    if stated.tp is not None or stated.pp is not None or not stated.replicas:
        return stated
    return replace(stated, deployable=True)


def stated_shape(resolved: ResolvedJob) -> StatedShape:
    capacity = not (resolved.pinned("concurrent") or resolved.pinned("batch"))
    if resolved.job.framework == "llamacpp":  # --split-mode layer: one server, no TP
        return StatedShape(tp=1, replicas=False, capacity=capacity)
    par = resolved.job.parallel
    ep = par.ep if resolved.pinned("ep") and par.ep > 1 and resolved.job.arch.moe else None
    if ep is not None and resolved.pinned("tp") and par.tp == ep:
        ep = None  # EP over the TP ranks (SGLang --tp 16 --ep 16): the experts split tp ways
    return StatedShape(par.tp if resolved.pinned("tp") else None,
                       par.pp if resolved.pinned("pp") else None, capacity=capacity, ep=ep)


def stated_expert_layout(job: Job, gpus: int, stated: StatedShape) -> tuple[int, int] | None:
    """With a stated EP size: the (tp, pp) of each attention rank, where ep of them make
    ``gpus`` (the engine's figures for a stated EP: ``serving_share`` with ``ep``); None where
    the count does not split so."""
    if stated.ep is None:
        return None
    pp = stated.pp or 1
    tp = stated.tp or expert_rank_tp(gpus, pp, stated.ep)
    return (tp, pp) if tp * pp * stated.ep == gpus and serving_tp_ok(job.arch, tp) else None


def serving_tp_limit(gpu: Gpu, per_node: int) -> int:
    """The most GPUs one TP group may span: a node (over PCIe where the GPU has no NVLink), or a
    rack-scale NVLink domain."""
    return max(per_node, nvlink_tp_domain(gpu, per_node))


def shapes(job: Job, gpus: int, tp_limit: int, tp: int | None = None) -> list[tuple[int, int]]:
    """Every (tp, pp) for a count, the largest TP first: the stated TP, else each valid TP of at
    most ``tp_limit`` GPUs (``serving_tp_limit``), PP over the rest. A smaller TP with PP can hold
    more: past the KV heads, TP copies the KV cache on every rank where PP splits it."""
    arch = job.arch
    options = ([tp] if not gpus % tp and serving_tp_ok(arch, tp) else []) if tp \
        else serving_tp_sizes(arch, gpus, tp_limit)
    return [(size, gpus // size) for size in options if gpus // size <= arch.layers]


def evaluate(job: Job, gpu: Gpu, tp: int, pp: int, per_node: int,
             budget: ServingBudget, replicas: int = 1, expert_parallel: bool = False
             ) -> ServingFit:
    """One layout's figures; with replicas, each GPU's are its replica's share of the
    sequences; ``expert_parallel``: the replicas are attention ranks of one engine whose
    routed experts are split over them (``serving_share`` with ``ep``)."""
    per_replica = -(-job.batch // replicas)
    share = serving_share(job if replicas == 1 else replace(job, batch=per_replica), tp, pp,
                          budget, replicas if expert_parallel else 1)
    capacity = gpu.memory_bytes_usable
    gpus = tp * pp * replicas
    return ServingFit(tp, pp, gpus, node_count(gpus, per_node), share.weights_bytes,
                      share.kv_per_sequence, share.workspace_bytes, share.fixed_bytes,
                      max(0, share.room(capacity)), share.max_sequences(capacity) * replicas,
                      job.batch, job.seq_len, share.memory_fraction, share.total_bytes,
                      replicas, expert_parallel)


def expert_parallel_ok(job: Job, gpus: int, per_node: int, stated: StatedShape) -> bool:
    """Data-parallel attention with expert parallelism inside a node or over whole nodes, for
    MLA MoE models (DeepSeek-V2/V3, Kimi K2): their latent KV cache cannot be split by heads, so
    under TP every rank holds all of it; vLLM's and SGLang's DeepSeek recipes run attention data
    parallel and the experts expert parallel instead, across nodes too (vLLM's multi-node
    data-parallel deployment, SGLang's --enable-dp-attention over --nnodes), where pipeline
    stages would not cut the time per token. On vLLM or SGLang, with no TP or PP stated."""
    moe = job.arch.moe
    return (moe is not None and job.arch.mla is not None
            and (2 <= gpus <= per_node or (gpus > per_node and gpus % per_node == 0))
            and moe.experts % gpus == 0 and stated.replicas and stated.tp is None
            and stated.pp is None and job.framework in ("vllm", "sglang"))
