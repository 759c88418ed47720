"""Candidate training layouts for a GPU count, and the rules that make a layout physically valid.

Rules (each one is what a framework asserts at start-up, or what the hardware forces):
- dp x tp x pp x cp = GPUs (Megatron-LM ``initialize_model_parallel``).
- TP divides the attention heads and the KV heads (Megatron query groups), and stays inside one
  NVLink domain (``nvlink_tp_domain``): its all-reduces run every layer and would crawl over the
  network. The domain is one node's GPUs, or a whole rack where NVLink switches join the trays
  (GB200 NVL72: 72 GPUs in 4-GPU trays).
- PP <= layers (Megatron splits layers over stages; uneven stages hold ceil(layers / pp)).
- CP splits each sequence into 2 x cp chunks for causal load balance: seq % (2 cp) == 0
  (Megatron ``context_parallel``); the planner keeps at least 2048 tokens per CP rank.
- EP divides the routed experts and the data-parallel size (experts are carved out of DP).
- Data parallelism splits whole sequences: dp x micro_batch x accumulation = global batch, so
  dp <= global_batch / micro_batch (Megatron and DeepSpeed assert the product).
- More than one node: whole nodes (GPUs a multiple of the node size).
- ZeRO-2/3 shard gradients and weights per micro-batch, which pipeline schedules do not support:
  with pp > 1 the planner uses ZeRO-0/1 (DeepSpeed PipelineEngine; Megatron's distributed
  optimizer is ZeRO-1).
- A stated ZeRO stage >= 1 on more than one GPU means sharding over data-parallel ranks: the
  planner then keeps dp >= 2 (one replica would silently ignore the request).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

from service.core.hardware.gpus import Gpu
from service.core.job.spec import PIPELINE_MICRO_BATCHES_PER_STAGE
from service.core.model.architecture import Architecture
from service.core.planning.plan_types import Layout
from service.core.planning.step_time import small_batch_tokens

MIN_CP_TOKENS = 2048
MICRO_BATCH_CHOICES = (1, 2, 4, 8, 16)


@dataclass(frozen=True, slots=True)
class SearchSpace:
    """What the planner may choose; a field the user stated is a one-value tuple."""

    arch: Architecture
    seq_len: int
    global_batch: int  # 0: not stated (no constraint on dp)
    nvlink_domain: int
    gpus_per_node: int
    tps: tuple[int, ...]
    pps: tuple[int, ...] | None  # None: any pp that fits the count
    cps: tuple[int, ...]
    eps: tuple[int, ...] | None  # None: choose (MoE only)
    zero_stages: tuple[int, ...]
    recomputes: tuple[str, ...]  # leanest last
    micro_batches: tuple[int, ...] | None  # None: choose
    offloads: tuple[str, ...]
    sequence_parallel: bool | None  # None: on whenever tp > 1 (Megatron practice)
    shard_group: int = 0
    zero_stated: bool = False
    shape_stated: bool = False  # TP and PP both stated: on a stated count, dp follows
    cp_last_resort: bool = False  # adapters: CP only on a count where nothing without it fits


def divisors(n: int) -> list[int]:
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


def nvlink_tp_domain(gpu: Gpu, per_node: int) -> int:
    """GPUs one tensor-parallel group may span. A catalog domain larger than the catalog's node
    is rack-scale (GB200 NVL72: 18 trays of 4 GPUs on one NVLink switch fabric, gpus.json
    ``topology_note``): TP may cross trays inside it. Otherwise the domain ends at the node
    (``per_node``, which the user may state smaller than the catalog's server)."""
    if gpu.nvlink_domain > gpu.gpus_per_node:
        return gpu.nvlink_domain
    return min(gpu.nvlink_domain, per_node)


def tensor_parallel_sizes(arch: Architecture, limit: int) -> tuple[int, ...]:
    """TP sizes that divide heads and KV heads, up to ``limit`` (the NVLink domain)."""
    common = math.gcd(arch.heads, arch.kv_heads_resolved)
    return tuple(d for d in divisors(common) if d <= limit)


def context_parallel_sizes(seq_len: int, limit: int = 64) -> tuple[int, ...]:
    """Powers of two with seq % (2 cp) == 0 and at least MIN_CP_TOKENS tokens per rank."""
    sizes = [1]
    cp = 2
    while cp <= limit and seq_len % (2 * cp) == 0 and seq_len // cp >= MIN_CP_TOKENS:
        sizes.append(cp)
        cp *= 2
    return tuple(sizes)


def node_count(gpus: int, per_node: int) -> int:
    return -(-gpus // per_node)


def counts_ok(gpus: int, per_node: int) -> bool:
    """One node, or whole nodes."""
    return gpus <= per_node or gpus % per_node == 0


@dataclass(frozen=True, slots=True)
class Structure:
    """The model-parallel shape of a layout; the knobs (ZeRO, recompute, mb) come on top."""

    dp: int
    tp: int
    pp: int
    cp: int
    ep: int


def dp_ok(space: SearchSpace, dp: int, gpus: int, cp: int = 1) -> bool:
    """Data-parallel sizes the rules allow: dividing the global batch, the HSDP group, and
    >= 2 when a stated ZeRO stage must shard something."""
    if space.global_batch and space.global_batch % dp:
        return False
    if dp * cp == 1 and gpus > 1 and space.zero_stated and max(space.zero_stages) >= 1 \
            and not space.shape_stated:  # "TP=8 PP=4 on 32 GPUs, distributed optimizer" stands
        return False
    return not (space.shard_group and dp % space.shard_group)


def structures(gpus: int, space: SearchSpace) -> Iterator[Structure]:
    arch = space.arch
    for tp in space.tps:
        for cp in space.cps:
            if gpus % (tp * cp):
                continue
            rest = gpus // (tp * cp)
            pps = space.pps if space.pps is not None else tuple(divisors(rest))
            for pp in pps:
                if pp > arch.layers or rest % pp:
                    continue
                dp = rest // pp
                if not dp_ok(space, dp, gpus, cp):
                    continue
                for ep in expert_parallel_sizes(arch, dp, space.eps):
                    yield Structure(dp, tp, pp, cp, ep)


def model_shapes(space: SearchSpace) -> list[tuple[int, int, int]]:
    """Every (tp, cp, pp) the space allows, fewest GPUs per replica first."""
    pps = space.pps if space.pps is not None else tuple(range(1, space.arch.layers + 1))
    shapes = [(tp, cp, pp) for tp in space.tps for cp in space.cps for pp in pps
              if pp <= space.arch.layers]
    return sorted(shapes, key=lambda s: (s[0] * s[1] * s[2], s))


def dp_sizes(space: SearchSpace, limit: int) -> list[int]:
    """Data-parallel sizes to try, ascending: divisors of the global batch, else 1..64 and
    powers of two (and three times them) up to ``limit``."""
    if space.global_batch:
        return [d for d in divisors(space.global_batch) if d <= limit]
    sizes = set(range(1, 65))
    p = 64
    while p <= limit:
        sizes.update((p, 3 * p // 2))
        p *= 2
    return sorted(d for d in sizes if d <= limit)


def expert_parallel_sizes(arch: Architecture, dp: int, stated: tuple[int, ...] | None) -> list[int]:
    if arch.moe is None:
        return [1] if stated in (None, (1,)) else []
    options = stated if stated is not None else tuple(divisors(arch.moe.experts))
    return [ep for ep in options if arch.moe.experts % ep == 0 and dp % ep == 0]


def micro_batch_options(space: SearchSpace, dp: int, cp: int = 1) -> tuple[int, ...]:
    """Micro-batches that divide each rank's share of the global batch. Unstated, only up to
    the first with ``small_batch_tokens`` per GPU: a bigger one costs memory and
    pipeline bubble and buys no speed in the step-time model."""
    if space.micro_batches is not None:
        mbs = space.micro_batches
    elif space.global_batch:
        tokens = space.seq_len // cp
        enough = small_batch_tokens(space.arch)
        mbs = MICRO_BATCH_CHOICES if tokens < enough // 8 else tuple(
            mb for mb in MICRO_BATCH_CHOICES if mb == 1 or tokens * mb // 2 < enough)
    else:  # no global batch stated: one sequence per data-parallel rank, as assumed and said
        mbs = (1,)
    if space.global_batch:
        per_rank = space.global_batch // dp
        mbs = tuple(mb for mb in mbs if per_rank % mb == 0)
    return mbs


def accumulation(space: SearchSpace, dp: int, pp: int, mb: int) -> tuple[int, int]:
    """(gradient accumulation steps, global batch) for a data-parallel size and micro-batch."""
    if space.global_batch:
        return space.global_batch // (dp * mb), space.global_batch
    steps = PIPELINE_MICRO_BATCHES_PER_STAGE * pp if pp > 1 else 1
    return steps, dp * mb * steps


def zero_options(space: SearchSpace, s: Structure) -> tuple[int, ...]:
    """ZeRO stages for a structure: none to shard with dp = 1; <= 1 with pipelines; not 0
    when dp > 1 (ZeRO-1's reduce-scatter + all-gather moves what DDP's all-reduce does)."""
    if space.zero_stated:
        return space.zero_stages
    if s.dp * s.cp == 1:  # context-parallel ranks share the model states too
        return (0,)
    return tuple(z for z in space.zero_stages if (s.pp == 1 or z <= 1) and z >= 1)


def make_layout(space: SearchSpace, s: Structure, zero: int, recompute: str, mb: int,
                offload: str) -> Layout:
    if offload != "none" and zero == 0:
        zero = 2  # DeepSpeed offloads from ZeRO's partitions: ZeRO-Offload runs stage 2, even on one GPU
    accum, global_batch = accumulation(space, s.dp, s.pp, mb)
    gpus = s.dp * s.tp * s.pp * s.cp
    sp = space.sequence_parallel if space.sequence_parallel is not None else s.tp > 1
    return Layout(gpus=gpus, nodes=node_count(gpus, space.gpus_per_node), dp=s.dp, tp=s.tp,
                  pp=s.pp, cp=s.cp, ep=s.ep, zero_stage=zero, sequence_parallel=sp,
                  recompute=recompute, micro_batch=mb, grad_accum=accum,
                  global_batch=global_batch, offload=offload)


def leanest(space: SearchSpace, s: Structure) -> Layout | None:
    """The least-memory knobs for a structure: most ZeRO, most recompute, smallest mb."""
    if space.micro_batches is None:  # 1 is always an option (it divides every rank's share),
        # and the leanest layout reads no sequence length (``shape_tables.py``)
        mb = 1
    else:
        mbs = micro_batch_options(space, s.dp, s.cp)
        if not mbs:
            return None
        mb = min(mbs)
    zeros = zero_options(space, s)
    if not zeros:
        return None
    return make_layout(space, s, max(zeros), space.recomputes[-1], mb, space.offloads[-1])


def knob_layouts(space: SearchSpace, s: Structure) -> Iterator[Layout]:
    for zero in zero_options(space, s):
        for recompute in space.recomputes:
            for mb in micro_batch_options(space, s.dp, s.cp):
                for offload in space.offloads:
                    yield make_layout(space, s, zero, recompute, mb, offload)


def violations(layout: Layout, arch: Architecture, nvlink_domain: int, gpus_per_node: int,
               seq_len: int, global_batch: int) -> list[str]:
    """Every physical rule the layout breaks (empty: valid). ``nvlink_domain``: the GPUs a TP
    group may span (``nvlink_tp_domain``); ``global_batch`` 0: not stated."""
    out: list[str] = []
    if layout.dp * layout.tp * layout.pp * layout.cp != layout.gpus:
        out.append("dp x tp x pp x cp != GPUs")
    if arch.heads % layout.tp or arch.kv_heads_resolved % layout.tp:
        out.append(f"tp={layout.tp} does not divide the heads and KV heads")
    if layout.tp > nvlink_domain:
        out.append(f"tp={layout.tp} leaves the {nvlink_domain}-GPU NVLink domain")
    if layout.pp > arch.layers:
        out.append(f"pp={layout.pp} exceeds {arch.layers} layers")
    if layout.cp > 1 and seq_len % (2 * layout.cp):
        out.append(f"cp={layout.cp} does not split {seq_len} tokens into 2 x cp chunks")
    if layout.ep > 1 and (arch.moe is None or arch.moe.experts % layout.ep
                          or layout.dp % layout.ep):
        out.append(f"ep={layout.ep} must divide the experts and dp")
    if layout.dp * layout.micro_batch * layout.grad_accum != layout.global_batch:
        out.append("dp x micro_batch x accumulation != global batch")
    if global_batch and layout.global_batch != global_batch:
        out.append(f"global batch {layout.global_batch} != the requested {global_batch}")
    if layout.dp > layout.global_batch // layout.micro_batch:
        out.append("more data-parallel ranks than micro-batches: DP splits whole sequences")
    if not counts_ok(layout.gpus, gpus_per_node):
        out.append(f"{layout.gpus} GPUs is not whole {gpus_per_node}-GPU nodes")
    if layout.nodes != node_count(layout.gpus, gpus_per_node):
        out.append("node count does not match the GPUs")
    return out
