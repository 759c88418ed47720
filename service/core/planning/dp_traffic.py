"""How long a step's data-parallel traffic takes against its compute, on a reference cluster.

The flat data-parallel terms of ``step_time.py`` are the traffic compute does not hide. Where
the traffic takes longer than the compute it overlaps with, the step waits for the network:
a ZeRO-3 / FSDP layout gathers every parameter of its model-parallel shard twice and
reduce-scatters its gradients on every micro-batch, so a MoE model without expert parallelism
(every GPU gathers all experts to compute with the few a token routes to) or a large model
with short micro-batches is communication-bound. Per GPU and optimizer step:

- traffic: the GPU's share of the parameters, ``dense / (tp x pp) + experts / (tp x pp x ep)``,
  in 16-bit: ZeRO 0-1 all-reduce (or reduce-scatter and all-gather) the gradients once, 2 x 2
  bytes per parameter (ring collectives move each byte about twice); ZeRO-2 also
  reduce-scatters every micro-batch's gradients (DeepSpeed stage 2); ZeRO-3 all-gathers the
  weights for the forward and the backward and reduce-scatters the gradients on every
  micro-batch, 3 x 2 bytes (Rajbhandari et al. 2019, sec. 7: 1.5x DDP's volume per pass);
- compute: 6 x active parameters x the tokens of the GPU's replica / (tp x pp x cp);
- on a reference cluster: DGX H100-class nodes, 989 TFLOP/s bf16 at 40% MFU, 450 GB/s of
  NVLink per GPU inside a node and one 400 Gb/s NIC (50 GB/s) per GPU across nodes (NVIDIA DGX
  H100 user guide: eight ConnectX-7 400 Gb/s ports). Across nodes a group's collectives use
  the NICs of all its ranks in a node at once (NCCL runs one ring or tree per NIC): a group with
  k ranks per node moves k x 50 GB/s out of it, up to NVLink's rate; with TP=8 each node holds
  one rank of each group, and each group has one NIC. A ranking weight, like the rest of the
  step-time model: time and cost use the GPU's MFU.
"""

from __future__ import annotations

from functools import lru_cache

from service.core.model.architecture import Architecture
from service.core.model.linears import expert_weight_params
from service.core.model.params import active_parameter_count, parameter_count
from service.core.planning.plan_types import Layout

REFERENCE_FLOPS = 989e12 * 0.40  # H100 SXM bf16 dense peak x a typical MFU, FLOP/s
REFERENCE_INTRA_NODE = 450e9  # bytes/s per GPU: NVLink 4 (900 GB/s both directions)
REFERENCE_INTER_NODE = 50e9  # bytes/s per GPU: one 400 Gb/s NIC per GPU
WIRE_BYTES = 2  # 16-bit weights and gradients on the wire


@lru_cache(maxsize=256)
def _parameters(arch: Architecture) -> tuple[int, int, int]:
    """(dense parameters, routed-expert parameters, active parameters per token)."""
    experts = expert_weight_params(arch) if arch.moe is not None else 0
    return parameter_count(arch) - experts, experts, active_parameter_count(arch)


def traffic_bytes(layout: Layout, arch: Architecture) -> float:
    """Bytes one GPU sends over its data-parallel group in an optimizer step."""
    dense, experts, _ = _parameters(arch)
    split = layout.tp * layout.pp
    shard = dense / split + experts / (split * layout.ep)
    if layout.zero_stage == 3:
        return 3 * WIRE_BYTES * shard * layout.grad_accum
    if layout.zero_stage == 2:
        return WIRE_BYTES * shard * (layout.grad_accum + 1)
    return 2 * WIRE_BYTES * shard


def compute_flops(layout: Layout, arch: Architecture, seq_len: int) -> float:
    """FLOPs one GPU computes in an optimizer step (6N per token, its share of its replica's)."""
    active = _parameters(arch)[2]
    tokens = layout.micro_batch * layout.grad_accum * seq_len
    return 6 * active * tokens / (layout.tp * layout.pp * layout.cp)


def traffic_ratio(layout: Layout, arch: Architecture, seq_len: int, gpus_per_node: int
                  ) -> float:
    """Seconds of data-parallel traffic per second of compute on the reference cluster."""
    replica = layout.tp * layout.cp  # a data-parallel group's ranks are a replica apart
    spans_nodes = replica * layout.dp > gpus_per_node
    ranks_per_node = max(1, min(layout.dp, gpus_per_node // replica))
    bandwidth = min(REFERENCE_INTRA_NODE, REFERENCE_INTER_NODE * ranks_per_node) \
        if spans_nodes else REFERENCE_INTRA_NODE
    seconds = traffic_bytes(layout, arch) / bandwidth
    return seconds / (compute_flops(layout, arch, seq_len) / REFERENCE_FLOPS)
