"""Put the components together: one estimate of per-GPU memory for a training or serving job."""

from __future__ import annotations

from service.core.compute.training_time import ComputeEstimate, training_time
from service.core.hardware.gpus import find_gpu, peak_flops
from service.core.job.request import EstimateRequest
from service.core.job.resolve import Resolved, resolve
from service.core.job.spec import Job
from service.core.memory import model_state
from service.core.memory.activations import (
    ActivationBreakdown,
    activation_breakdown,
    kept_activation_bytes,
)
from service.core.memory.breakdown import Component, Estimate
from service.core.memory.lora import lora_params
from service.core.memory.overhead import overhead, temporary
from service.core.memory.serving import (
    QUANT_BITS,
    ServingBudget,
    kv_budget_bytes,
    max_concurrent_sequences,
)
from service.core.memory.serving_split import serving_share
from service.core.model.params import active_parameter_count, parameter_count

DEFAULT_TIME_GPU = "h100-80gb"

ACT_SOURCES = {
    "hf": "saved tensors of HF transformers modules, checked in bench/measure",
    "hf_cpu": "saved tensors of HF transformers modules on CPU, as measured in bench/measure",
    "megatron": "Korthikanti et al. 2022 eq. 2, generalised to GQA/SwiGLU (saved_tensors.py)",
    "korthikanti": "Korthikanti et al. 2022, arXiv 2205.05198, eq. 2",
    "seed_s3": "the S3 seed's block model (seed-cases.md)",
}


def activations_component(
    job: Job, acts: ActivationBreakdown
) -> tuple[Component, dict[str, int | float | str]]:
    n = kept_activation_bytes(acts, job.parallel.pp)
    kept = {"none": "all saved tensors", "selective": "core attention recomputed",
            "full": "layer inputs only"}[job.recompute]
    per_layer_kept = round(acts.layers_bytes / (acts.layers_on_gpu * acts.in_flight_micro_batches))
    values = (f"{acts.layers_on_gpu} layers x {per_layer_kept:,} B/layer ({kept})"
              f" x {acts.in_flight_micro_batches:g} in flight + {acts.non_layer_bytes:,} B logits")
    if job.parallel.pp > 1:
        values += " (the busier of the first and last pipeline stage)"
    comp = Component(
        "activations", n,
        "layers_on_gpu x per-layer saved bytes x micro-batches in flight + embedding/logits",
        values, ACT_SOURCES[job.activation_model],
    )
    extra: dict[str, int | float | str] = {
        "activation_per_layer_bytes": acts.per_layer_bytes,
        "activation_non_layer_bytes": acts.non_layer_bytes,
        "pipeline_in_flight": acts.in_flight_micro_batches,
    }
    return comp, extra


def training_estimate(resolved: Resolved) -> Estimate:
    job = resolved.job
    comps = [model_state.weights(job), model_state.gradients(job), model_state.optimizer(job)]
    acts = activation_breakdown(job)
    act, extra = activations_component(job, acts)
    comps.append(act)
    comps.append(temporary(job, acts))
    comps.append(overhead(job, sum(c.bytes for c in comps)))
    extra["grad_accum"] = job.grad_accum
    trainable = (parameter_count(job.arch) if job.trains_all_weights
                 else lora_params(job.arch, job.lora_rank, job.lora_targets))
    return _estimate(resolved, comps, trainable, model_state.offloaded_bytes(job), extra)


def serving_estimate(resolved: Resolved, budget: ServingBudget | None = None) -> Estimate:
    job, arch = resolved.job, resolved.job.arch
    budget = budget or ServingBudget()
    tp, pp = job.parallel.tp, job.parallel.pp
    share = serving_share(job, tp, pp, budget)
    weights, work, chunk = share.weights, share.workspace, share.chunk
    per_seq = share.kv_per_sequence  # KV heads split over TP (replicated past kv_heads)
    kv = share.kv_total(job.batch)
    fixed = budget.non_torch_bytes + budget.cuda_graph_bytes
    comps = [
        Component("weights", weights, "P x bits_per_weight / 8 / (tp x pp)",
                  f"{round(parameter_count(arch) * job.param_scale):,} x "
                  f"{QUANT_BITS[job.quantization]:g} bits ({job.quantization}) / 8 / {tp * pp}",
                  "AutoGPTQ/AutoAWQ group-128 scales, llama.cpp GGUF block sizes"),
        Component("kv_cache", kv,
                  "2 x layers x kv_heads x head_dim x context x sequences x bytes x kv share / pp",
                  f"{per_seq:,} B/sequence x {job.batch}",
                  "Ainslie et al. 2023 (GQA); DeepSeek-V2 sec. 2.1.2 (MLA latent cache)"),
        Component("activations", work, "forward workspace of one layer + fp32 sampling logits",
                  f"{chunk:,} tokens in the forward pass", "vLLM profile run"),
        Component("overhead", fixed, "non-torch memory + CUDA graphs",
                  f"{budget.non_torch_bytes:,} + {budget.cuda_graph_bytes:,} B",
                  "vLLM worker memory profiling"),
    ]
    extra: dict[str, int | float | str] = {"kv_bytes_per_sequence": per_seq}
    if job.gpu is not None:
        kv_budget = kv_budget_bytes(job.gpu.memory_bytes_usable, weights, work, budget)
        extra["kv_budget_bytes"] = max(0, kv_budget)
        extra["max_concurrent_sequences"] = max_concurrent_sequences(kv_budget, per_seq)
        extra["gpu_memory_utilization"] = budget.memory_fraction
    return _estimate(resolved, comps, 0, 0, extra)


def _estimate(resolved: Resolved, comps: list[Component], trainable: int, offloaded: int,
              extra: dict[str, int | float | str]) -> Estimate:
    job = resolved.job
    scale = job.param_scale
    est = Estimate(
        model_id=job.model_id, task=job.task,
        params_total=round(parameter_count(job.arch) * scale),
        params_active=round(active_parameter_count(job.arch) * scale),
        params_trainable=round(trainable * (scale if job.trains_all_weights else 1.0)),
        components=comps, assumptions=list(resolved.assumptions),
        gpu_id=job.gpu.id if job.gpu else None, gpu_name=job.gpu.name if job.gpu else None,
        capacity_bytes=job.gpu.memory_bytes_usable if job.gpu else None,
        cpu_offload_bytes=offloaded, extra=extra,
    )
    return est


def layout(job: Job) -> dict[str, int | str | bool]:
    par = job.parallel
    return {
        "gpus": par.gpus, "dp": par.dp, "tp": par.tp, "pp": par.pp, "cp": par.cp, "ep": par.ep,
        "zero_stage": par.zero_stage, "sequence_parallel": par.sequence_parallel,
        "recompute": job.recompute, "micro_batch": job.micro_batch,
        "grad_accum": job.grad_accum, "offload": job.offload,
    }


def compute_for(resolved: Resolved, request: EstimateRequest,
                textbook: bool = False) -> ComputeEstimate | None:
    """Training time and cost when ``tokens`` is given (GPU: the request's, else H100 SXM).

    ``textbook``: C = 6ND only, no attention term and no recompute (the S5 seed's formula).
    """
    if request.tokens is None:
        return None
    job = resolved.job
    gpu = job.gpu
    if gpu is None:
        gpu = find_gpu(DEFAULT_TIME_GPU)
        resolved.assumptions.append(f"time on {gpu.name} (no GPU given)")
    peak_precision = {"fp8": "fp8", "fp32": "tf32"}.get(job.precision, "bf16")
    mfu = request.mfu if request.mfu is not None else gpu.default_mfu
    if request.mfu is None:
        resolved.assumptions.append(f"MFU {mfu:.0%} (typical for {gpu.name})")
    price = request.price_per_gpu_hour
    if price is None:
        price = gpu.price_per_gpu_hour_usd
        if price is not None:
            resolved.assumptions.append(f"${price:.2f} per GPU-hour (catalog, on-demand)")
    active = active_parameter_count(job.arch) * job.param_scale
    return training_time(
        params_active=active, tokens=request.tokens, gpus=job.parallel.gpus,
        peak_flops=peak_flops(gpu, peak_precision), mfu=mfu, arch=job.arch,
        seq_len=job.seq_len, full_recompute=job.recompute == "full" and not textbook,
        price_per_gpu_hour=price, include_attention=not textbook,
    )


def estimate(request: EstimateRequest) -> Estimate:
    """Per-GPU memory for the request, every default filled in and listed in assumptions."""
    resolved = resolve(request)
    infer = resolved.job.task == "infer"
    result = serving_estimate(resolved) if infer else training_estimate(resolved)
    result.layout = layout(resolved.job)
    if resolved.job.task != "infer":
        result.compute = compute_for(resolved, request)
        result.assumptions = list(resolved.assumptions)
    return result
