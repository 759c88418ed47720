"""Serving plans: the fewest GPUs for weights plus the KV cache, and concurrency on N GPUs.

Budgeted the way vLLM sizes its KV cache (``serving.kv_budget_bytes``): gpu_memory_utilization x
usable memory, minus the weights, the forward pass's activation peak, non-torch memory (CUDA
context, NCCL) and captured CUDA graphs; what is left holds whole sequences of KV cache.
Layouts: tensor parallelism inside one node (vLLM's head rule, ``kv_split.py``), then pipeline
parallelism over whole nodes (vLLM ``pipeline_parallel_size``), each stage holding layers / pp
of the weights and of the KV cache. One replica: the fewest GPUs, not the highest throughput.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from service.core.hardware.gpus import Gpu
from service.core.job.request import EstimateRequest
from service.core.job.resolve import Resolved
from service.core.job.spec import Job, Parallelism
from service.core.memory.estimate_job import serving_estimate
from service.core.memory.serving import (
    ServingBudget,
    kv_budget_bytes,
    max_concurrent_sequences,
)
from service.core.memory.serving_split import serving_share, serving_tp_ok
from service.core.planning.layouts import divisors, node_count
from service.core.planning.plan_types import Plan
from service.core.units import gb

MAX_SERVING_GPUS = 4096


@dataclass(frozen=True, slots=True)
class ServingFit:
    """Per-GPU figures of one serving layout."""

    tp: int
    pp: int
    gpus: int
    nodes: int
    weights_bytes: int
    kv_per_sequence_bytes: int  # this GPU's share of one sequence at the context length
    workspace_bytes: int
    fixed_bytes: int  # non-torch memory + CUDA graphs
    kv_budget_bytes: int
    max_concurrent: int
    sequences: int

    @property
    def fits(self) -> bool:
        return self.max_concurrent >= self.sequences

    @property
    def total_bytes(self) -> int:
        """Per GPU with the requested sequences' KV cache."""
        return self.weights_bytes + self.workspace_bytes + self.fixed_bytes \
            + self.kv_per_sequence_bytes * self.sequences

    def to_dict(self) -> dict[str, Any]:
        return {"tp": self.tp, "pp": self.pp, "gpus": self.gpus, "nodes": self.nodes,
                "weights_bytes": self.weights_bytes,
                "kv_per_sequence_bytes": self.kv_per_sequence_bytes,
                "workspace_bytes": self.workspace_bytes, "fixed_bytes": self.fixed_bytes,
                "kv_budget_bytes": self.kv_budget_bytes,
                "max_concurrent_sequences": self.max_concurrent, "sequences": self.sequences,
                "per_gpu_total": self.total_bytes, "fits": self.fits}


def serving_budget(request: EstimateRequest) -> ServingBudget:
    if request.memory_headroom is None:
        return ServingBudget()
    return ServingBudget(memory_fraction=request.memory_headroom)


def evaluate(job: Job, gpu: Gpu, tp: int, pp: int, per_node: int,
             budget: ServingBudget) -> ServingFit:
    share = serving_share(job, tp, pp, budget)
    kv_budget = kv_budget_bytes(gpu.memory_bytes_usable, share.weights, share.workspace, budget)
    return ServingFit(tp, pp, tp * pp, node_count(tp * pp, per_node), share.weights,
                      share.kv_per_sequence, share.workspace,
                      budget.non_torch_bytes + budget.cuda_graph_bytes, max(0, kv_budget),
                      max_concurrent_sequences(kv_budget, share.kv_per_sequence), job.batch)


def split(arch_job: Job, gpus: int, per_node: int, tp: int | None = None) -> tuple[int, int] | None:
    """(tp, pp) for a count: the stated TP, else the largest valid TP inside a node; PP over the
    rest."""
    arch = arch_job.arch
    options = [tp] if tp else sorted((d for d in divisors(gpus) if d <= per_node), reverse=True)
    for size in options:
        if gpus % size:
            continue
        pp = gpus // size
        if serving_tp_ok(arch, size) and pp <= arch.layers:
            return size, pp
    return None


def counts(per_node: int) -> list[int]:
    out = [c for c in (1, 2, 4, 8, 16, 32, 64) if c < per_node] + [per_node]
    nodes = 2
    while nodes * per_node <= MAX_SERVING_GPUS:
        out.append(nodes * per_node)
        nodes += 1
    return out


def fewest_serving(job: Job, gpu: Gpu, per_node: int, budget: ServingBudget,
                   tp: int | None = None) -> tuple[ServingFit | None, ServingFit | None]:
    """(first layout that fits, the one just below it); a stated ``tp`` stays fixed."""
    miss: ServingFit | None = None
    for count in counts(per_node):
        shape = split(job, count, per_node, tp)
        if shape is None:
            continue
        fit = evaluate(job, gpu, shape[0], shape[1], per_node, budget)
        if fit.fits:
            return fit, miss
        miss = fit
    return None, miss


def plan_serving(request: EstimateRequest, resolved: Resolved, gpu: Gpu) -> Plan:
    job = replace(resolved.job, gpu=gpu)
    per_node = request.gpus_per_node or gpu.gpus_per_node
    budget = serving_budget(request)
    plan = Plan(task="infer", model_id=job.model_id, gpu_id=gpu.id, gpu_name=gpu.name,
                capacity_bytes=gpu.memory_bytes_usable,
                budget_bytes=round(gpu.memory_bytes_usable * budget.memory_fraction),
                headroom=budget.memory_fraction, fits=False,
                mode="given" if request.gpu_count or request.nodes else "fewest")
    best, miss = fewest_serving(job, gpu, per_node, budget, request.tp)
    plan.min_gpus = best.gpus if best else None
    chosen: ServingFit | None = best
    if plan.mode == "given":
        count = resolved.job.parallel.gpus
        shape = (request.tp, count // request.tp) if request.tp else split(job, count, per_node)
        chosen = evaluate(job, gpu, shape[0], shape[1], per_node, budget) if shape else None
        plan.gpus = count
    if chosen is not None:
        plan.gpus, plan.fits = chosen.gpus, chosen.fits
        plan.serving = chosen.to_dict() | {"context": job.seq_len,
                                           "gpu_memory_utilization": budget.memory_fraction}
        par = Parallelism(tp=chosen.tp, pp=chosen.pp)
        plan.estimate = serving_estimate(Resolved(replace(job, parallel=par), resolved.model, []),
                                         budget)
        plan.why = _why(chosen, miss if plan.mode == "fewest" else None, job, gpu, budget)
        if not chosen.fits:
            plan.shortfall_bytes = chosen.kv_per_sequence_bytes * chosen.sequences \
                - chosen.kv_budget_bytes
    plan.verdict = _verdict(plan, chosen, job, gpu, per_node)
    plan.assumptions = [n for n in resolved.assumptions
                        if not n.startswith("serving with tensor parallelism")] + [
        f"vLLM-style budget: gpu_memory_utilization {budget.memory_fraction:.0%} of "
        f"{gb(gpu.memory_bytes_usable)}, minus weights, activation peak "
        f"({budget.max_batched_tokens:,} batched tokens), {gb(budget.non_torch_bytes)} non-torch "
        f"memory and {gb(budget.cuda_graph_bytes)} CUDA graphs",
        "tensor parallelism inside one node (over PCIe where the GPU has no NVLink), pipeline "
        "parallelism across whole nodes; one replica",
        "KV cache counted as whole sequences at the full context (paging only saves on "
        "shorter ones)",
    ]
    return plan


def _why(fit: ServingFit, miss: ServingFit | None, job: Job, gpu: Gpu,
         budget: ServingBudget) -> list[str]:
    quant = "16-bit" if job.quantization in ("none", "bf16", "fp16") else job.quantization
    kv_dtype = "16-bit" if job.kv_cache_dtype == "auto" else job.kv_cache_dtype
    lines = [
        f"weights {gb(fit.weights_bytes)} per GPU ({quant}, split {fit.gpus} ways)",
        f"KV cache {gb(fit.kv_per_sequence_bytes)} per sequence per GPU at "
        f"{job.seq_len:,} tokens ({kv_dtype} KV); {fit.sequences} sequences need "
        f"{gb(fit.kv_per_sequence_bytes * fit.sequences)}",
        f"KV budget {gb(fit.kv_budget_bytes)} per GPU = {budget.memory_fraction:.0%} x "
        f"{gb(gpu.memory_bytes_usable)} - weights - activation peak {gb(fit.workspace_bytes)} - "
        f"{gb(fit.fixed_bytes)} non-torch and CUDA graphs",
        f"up to {fit.max_concurrent:,} concurrent sequences at {job.seq_len:,} tokens on "
        f"{fit.gpus} GPU{'s' if fit.gpus > 1 else ''} (TP={fit.tp}"
        + (f", PP={fit.pp}" if fit.pp > 1 else "") + ")",
    ]
    if miss is not None:
        lines.append(f"fewer GPUs do not fit: on {miss.gpus} (TP={miss.tp}"
                     + (f", PP={miss.pp}" if miss.pp > 1 else "")
                     + f") room for {miss.max_concurrent:,} sequences, {fit.sequences} asked")
    return lines


def _verdict(plan: Plan, fit: ServingFit | None, job: Job, gpu: Gpu, per_node: int) -> str:
    what = f"{job.seq_len:,} tokens x {job.batch} sequence{'s' if job.batch > 1 else ''}"
    if fit is None:
        return f"Cannot serve {job.model_id} at {what} on {plan.gpus or 'any number of'} " \
               f"{gpu.name} GPUs: no valid tensor/pipeline split"
    shape = f"TP={fit.tp}" + (f", PP={fit.pp}" if fit.pp > 1 else "")
    where = f"{fit.gpus}x {gpu.name}" + (f" ({fit.nodes} nodes)" if fit.nodes > 1 else "")
    if fit.fits:
        return f"Serves {job.model_id} at {what} on {where} ({shape}); up to " \
               f"{fit.max_concurrent:,} concurrent sequences at {job.seq_len:,} tokens"
    more = f"; fewest that fit: {plan.min_gpus}" if plan.min_gpus else ""
    return f"Does not serve {what} on {where} ({shape}): room for {fit.max_concurrent:,} " \
           f"sequences{more}"
