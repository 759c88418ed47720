"""Relative step time of a training layout: a simple model that ranks layouts of equal GPU count.

1.0 is the ideal step (every GPU busy with the model's 6N FLOPs per token). Each term multiplies:

- recompute: full re-runs the forward, 8N instead of 6N FLOPs: x 4/3; selective recomputes
  only core attention: ~ +3% (Korthikanti et al. 2022, table 4: 2-4% overhead); torchtitan's
  op-level selective recompute runs every second matmul again (``op_sac_factor``);
- pipeline bubble: 1 + (pp - 1) / (v x m) for m micro-batches per step and v virtual stages
  (1F1B: Narayanan et al. 2021, sec. 2.2; interleaved: sec. 2.2.2); the pipeline runs at the
  pace of its busiest stage: the fullest (ceil(L / pp) layers) plus the last stage's LM head and
  loss, x pp x (ceil(L / pp) x layer + head) / (L x layer + head) in the matmul work per token
  (layer: a layer's active weights, head: vocab x hidden). Megatron-LM's
  --account-for-embedding-in-pipeline-split and --account-for-loss-in-pipeline-split exist for
  that head: with 2 of Llama 3.1 405B's 126 layers per stage, its 2.1B-weight head makes the last
  stage a third slower;
- tensor parallelism: two all-reduces forward and two backward per layer over NVLink,
  ~ +4% per doubling of tp (Megatron-LM scaling runs, Narayanan et al. 2021 fig. 13); TP is never
  placed across nodes (layouts.py forbids it);
- context parallelism: ring exchange of K/V, mostly overlapped, ~ +4% per doubling;
- expert parallelism: two all-to-alls per MoE layer, ~ +2% per doubling;
- data parallelism: gradient all-reduce (ZeRO 0-2, 2 x params) ~ +2% inside a node, +4% across
  nodes; ZeRO-3 also all-gathers weights for forward and backward: 1.5x that volume (Rajbhandari
  et al. 2019, sec. 7); ZeRO-2 adds a reduce-scatter per accumulation step: +0.5% (none
  without accumulation, where the two move the same bytes); where the
  traffic outlasts the compute (ZeRO-3 over a MoE model's experts, short micro-batches across
  nodes) the step takes the traffic's time instead (``dp_traffic.py``);
- offload: CPU Adam and PCIe traffic (ZeRO-Offload, Ren et al. 2021): optimizer x 1.5,
  optimizer and parameters (ZeRO-Infinity) x 3;
- small micro-batches: under 2048 tokens per GPU per micro-batch GEMMs lose efficiency,
  +3% per halving; a model narrower than 4096 needs proportionally more tokens for the same
  GEMM work (tokens x hidden): 10,923 at GPT-2's 768, where nanoGPT's train.py runs 12 x 1,024
  tokens per micro-batch and llm.c 64 x 1,024 (``small_batch_tokens``).
These are ranking weights, not a performance prediction: time and cost use the GPU's MFU.
"""

from __future__ import annotations

import math
from functools import lru_cache

from service.core.memory.saved_op_sac import op_sac_applies, op_sac_recompute_share
from service.core.model.architecture import Architecture
from service.core.model.params import active_parameter_count, parameter_breakdown
from service.core.planning.dp_traffic import traffic_ratio
from service.core.planning.plan_types import Layout

RECOMPUTE_FACTOR = {"none": 1.0, "selective": 1.03, "full": 4 / 3}
OFFLOAD_FACTOR = {"none": 1.0, "optimizer": 1.5, "optimizer_and_params": 3.0}
TP_PER_DOUBLING = 0.04
CP_PER_DOUBLING = 0.04
EP_PER_DOUBLING = 0.02
DP_INTRA_NODE = 0.02
DP_INTER_NODE = 0.04
ZERO3_VOLUME = 1.5
ZERO2_EXTRA = 0.005
SMALL_MICRO_BATCH_TOKENS = 2048
SMALL_MICRO_BATCH_PER_HALVING = 0.03
SMALL_MICRO_BATCH_HIDDEN = 4096  # the width the 2048 tokens are for (Llama 7B/8B)


def small_batch_tokens(arch: Architecture | None) -> int:
    """Tokens per GPU per micro-batch under which GEMMs lose efficiency: SMALL_MICRO_BATCH_TOKENS
    at SMALL_MICRO_BATCH_HIDDEN and wider, the same tokens x hidden for a narrower model."""
    if arch is None or arch.hidden >= SMALL_MICRO_BATCH_HIDDEN:
        return SMALL_MICRO_BATCH_TOKENS
    return -(-SMALL_MICRO_BATCH_TOKENS * SMALL_MICRO_BATCH_HIDDEN // arch.hidden)


@lru_cache(maxsize=256)
def head_per_layer(arch: Architecture) -> float:
    """The LM head's matmul work (vocab x hidden, tied or not) in layers of the model: the work
    the last pipeline stage does besides its layers."""
    b = parameter_breakdown(arch)
    layers_work = active_parameter_count(arch) - b.embedding - b.lm_head
    return arch.vocab * arch.hidden * arch.layers / layers_work if layers_work > 0 else 0.0


def pipeline_bubble(pp: int, micro_batches: int, virtual_stages: int = 1) -> float:
    """Bubble over useful time: (pp - 1) / (v x m) (Narayanan et al. 2021, sec. 2.2)."""
    if pp <= 1:
        return 0.0
    return (pp - 1) / (virtual_stages * max(1, micro_batches))


def step_terms(layout: Layout, seq_len: int, gpus_per_node: int, layers: int,
               virtual_stages: int = 1, arch: Architecture | None = None, stack: str = ""
               ) -> tuple[tuple[str, float], ...]:
    """The multiplying terms of the relative step time, named for explanations. With ``arch``,
    a data-parallel group whose traffic outlasts the compute sets the pace
    (``dp_traffic.py``). ``stack``: the layout's stack (torchtitan's selective recompute is
    its op-level policy)."""
    terms: list[tuple[str, float]] = []
    if layout.recompute == "selective" and stack == "fsdp" and arch is not None:
        terms.append(("op-level selective recompute", op_sac_factor(arch)))
    elif layout.recompute != "none":
        terms.append((f"{layout.recompute} recompute", RECOMPUTE_FACTOR[layout.recompute]))
    if layout.pp > 1:
        bubble = pipeline_bubble(layout.pp, layout.grad_accum, virtual_stages)
        terms.append((f"pipeline bubble (pp-1)/m = {layout.pp - 1}/{layout.grad_accum}",
                      1 + bubble))
        fullest = -(-layers // layout.pp)
        head = head_per_layer(arch) if arch is not None else 0.0
        pace = layout.pp * (fullest + head) / (layers + head)
        if pace > 1 + 1e-9:
            terms.append((f"the busiest stage ({fullest} layers" + (" + the LM head)" if head else ")"),
                          pace))
    if layout.tp > 1:
        terms.append((f"TP={layout.tp}", 1 + TP_PER_DOUBLING * math.log2(layout.tp)))
    if layout.cp > 1:
        terms.append((f"CP={layout.cp}", 1 + CP_PER_DOUBLING * math.log2(layout.cp)))
    if layout.ep > 1:
        terms.append((f"EP={layout.ep}", 1 + EP_PER_DOUBLING * math.log2(layout.ep)))
    if layout.dp * layout.cp > 1:  # context-parallel ranks reduce gradients too
        spans_nodes = layout.tp * layout.cp * layout.dp > gpus_per_node
        dp = DP_INTER_NODE if spans_nodes else DP_INTRA_NODE
        if layout.zero_stage == 3:
            dp *= ZERO3_VOLUME
        elif layout.zero_stage == 2 and layout.grad_accum > 1:
            dp += ZERO2_EXTRA  # without accumulation its one reduce-scatter is ZeRO-1's
        name = f"data-parallel {'ZeRO-3 ' if layout.zero_stage == 3 else ''}communication"
        bound = traffic_ratio(layout, arch, seq_len, gpus_per_node) if arch is not None \
            else 0.0
        if bound > 1 + dp:
            name += f" (communication-bound: {bound:.1f}x the compute)"
        terms.append((name, max(1 + dp, bound)))
    if layout.offload != "none":
        terms.append((f"offload of {layout.offload.replace('_', ' ')}",
                      OFFLOAD_FACTOR[layout.offload]))
    tokens = seq_len * layout.micro_batch / layout.cp
    enough = small_batch_tokens(arch)
    if tokens < enough:
        halvings = math.log2(enough / tokens)
        terms.append(("small micro-batch", 1 + SMALL_MICRO_BATCH_PER_HALVING * halvings))
    return tuple(terms)


def op_sac_factor(arch: Architecture) -> float:
    """torchtitan's op-level selective recompute: backward runs every second matmul of a dense
    layer again (``op_sac_recompute_share``); latent attention and routed experts, which the
    policy does not save, as full recompute."""
    if not op_sac_applies(arch, arch.moe is not None):
        return RECOMPUTE_FACTOR["full"]
    return 1 + op_sac_recompute_share(arch) / 3


def relative_step_time(terms: tuple[tuple[str, float], ...]) -> float:
    return math.prod(factor for _, factor in terms)
