"""Fill every default of a request into a concrete Job, writing each one down as an assumption."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import cast

from service.core.errors import InvalidInput
from service.core.hardware.gpus import Gpu, find_gpu
from service.core.job.choices import (
    ACTIVATION_MODELS,
    LORA_TARGETS,
    OFFLOADS,
    OVERHEAD_MODELS,
    PIPELINE_SCHEDULES,
    RECOMPUTE,
    TASKS,
    check_recipe,
)
from service.core.job.request import EstimateRequest
from service.core.job.spec import (
    FinetuneMethod,
    Job,
    Offload,
    Parallelism,
    Recompute,
    Task,
)
from service.core.memory.overhead import ALLOCATOR_RESERVE, default_context_bytes
from service.core.memory.serving import check_kv_dtype, check_quantization
from service.core.model.architecture import Architecture
from service.core.model.lookup import ResolvedModel, resolve_model
from service.core.units import GiB, human_count

DEFAULT_SEQ_LEN = 4096


@dataclass(slots=True)
class Resolved:
    job: Job
    model: ResolvedModel
    assumptions: list[str] = field(default_factory=list)


def _choice(name: str, value: str, accepted: tuple[str, ...]) -> str:
    if value not in accepted:
        raise InvalidInput(name, f"unknown value {value!r}", ", ".join(accepted))
    return value


def _task(req: EstimateRequest, notes: list[str]) -> tuple[str, str]:
    task = req.task
    if task is None:
        task = "finetune" if (req.lora_rank or req.finetune_method) else "train"
        if req.quantization and req.quantization != "nf4" and not req.lora_rank:
            task = "infer"
        notes.append(f"task: {task} (not stated)")
    _choice("task", task, TASKS)
    method = req.finetune_method
    if task == "finetune" and method is None:
        if req.lora_rank is None:
            method = "full"
        else:
            method = "qlora" if req.quantization in ("nf4", "int4") else "lora"
        notes.append(f"fine-tuning method: {method}")
    return task, _choice("finetune_method", method or "full", ("full", "lora", "qlora"))


def _recompute(req: EstimateRequest, method: str, notes: list[str]) -> str:
    """The stated recompute; unstated, none, except for QLoRA, where peft's
    ``prepare_model_for_kbit_training`` turns gradient checkpointing on by default."""
    if req.recompute is not None:
        return _choice("recompute", req.recompute, RECOMPUTE)
    if method == "qlora":
        notes.append("gradient checkpointing on (full recompute), as peft prepares QLoRA models")
        return "full"
    return "none"


def _offload(req: EstimateRequest, par: Parallelism) -> str:
    """Optimizer offload works with any ZeRO stage; parameter offload only with ZeRO-3
    (DeepSpeed ``offload_param``, FSDP ``CPUOffload``), which gathers layers as it goes."""
    offload = _choice("offload", req.offload or "none", OFFLOADS)
    if offload == "optimizer_and_params" and par.zero_stage < 3:
        raise InvalidInput("offload", "offloading parameters needs ZeRO-3 (zero_stage 3)",
                           "none or optimizer at ZeRO 0-2; optimizer_and_params with zero_stage 3")
    return offload


def _sequence_length(req: EstimateRequest, arch: Architecture, notes: list[str]) -> int:
    """The stated length, else 4096 tokens; a learned position table (GPT-2) caps both."""
    limit = arch.max_positions if arch.positions == "learned" else 0
    if req.seq_len is not None:
        if limit and req.seq_len > limit:
            raise InvalidInput("seq_len", f"{req.seq_len:,} tokens exceed the model's {limit:,} "
                               "learned positions", f"1..{limit:,}")
        return req.seq_len
    seq = min(DEFAULT_SEQ_LEN, limit) if limit else DEFAULT_SEQ_LEN
    notes.append(f"sequence length {seq} tokens" + (" (the model's position table)"
                                                    if seq != DEFAULT_SEQ_LEN else ""))
    return seq


def _gpu_layout(req: EstimateRequest, gpu: Gpu | None, model_split: int,
                notes: list[str]) -> int:
    if req.gpu_count is not None:
        count = req.gpu_count
        if req.nodes is not None and req.gpu_count % req.nodes:
            raise InvalidInput("gpu_count", f"{count} GPUs do not split over {req.nodes} nodes",
                               "a multiple of nodes")
        return count
    if req.nodes is not None:
        per_node = req.gpus_per_node or (gpu.gpus_per_node if gpu else 8)
        if req.gpus_per_node is None:
            notes.append(f"{per_node} GPUs per node")
        return req.nodes * per_node
    return model_split


def _parallelism(req: EstimateRequest, task: str, gpu: Gpu | None, model: ResolvedModel,
                 notes: list[str]) -> Parallelism:
    arch = model.arch
    tp, pp, cp = req.tp or 1, req.pp or 1, req.cp or 1
    gpus = _gpu_layout(req, gpu, tp * pp * cp, notes)
    if task == "infer" and req.tp is None and gpus > 1:
        tp = gpus
        notes.append(f"serving with tensor parallelism over all {gpus} GPUs")
    if gpus % (tp * pp * cp):
        raise InvalidInput("gpu_count", f"{gpus} GPUs are not a multiple of tp x pp x cp = "
                           f"{tp * pp * cp}", "gpu_count = dp x tp x pp x cp")
    if arch.heads % tp:
        raise InvalidInput("tp", f"tp={tp} does not divide {arch.heads} attention heads",
                           f"a divisor of {arch.heads}")
    if task != "infer" and arch.kv_heads_resolved % tp:
        raise InvalidInput("tp", f"tp={tp} does not divide {arch.kv_heads_resolved} KV heads",
                           f"a divisor of {arch.kv_heads_resolved} (Megatron query groups)")
    if pp > arch.layers:
        raise InvalidInput("pp", f"pp={pp} exceeds {arch.layers} layers", f"1..{arch.layers}")
    dp = gpus // (tp * pp * cp)
    ep = req.ep or 1
    if ep > 1 and (arch.moe is None or arch.moe.experts % ep or dp % ep):
        raise InvalidInput("ep", f"ep={ep} must divide the experts and dp={dp}",
                           "a divisor of both (MoE models only)")
    zero = req.zero_stage if req.zero_stage is not None else 0
    if req.zero_stage is None and task != "infer":
        notes.append("ZeRO stage 0 (plain data parallelism)")
    if req.shard_group and dp % req.shard_group:
        raise InvalidInput("shard_group", f"{req.shard_group} does not divide dp={dp}",
                           f"a divisor of {dp}")
    schedule = _choice("pp_schedule", req.pp_schedule or "1f1b", PIPELINE_SCHEDULES)
    return Parallelism(dp=dp, tp=tp, pp=pp, cp=cp, ep=ep,
                       sequence_parallel=bool(req.sequence_parallel), zero_stage=zero,
                       shard_group=req.shard_group or 0, pp_schedule=schedule,
                       virtual_stages=req.virtual_stages or 1)


def resolve(req: EstimateRequest) -> Resolved:
    notes: list[str] = []
    model = resolve_model(req.model, req.params_b, req.arch)
    if model.stated_params:
        notes.append(f"{model.description}; model states use the stated "
                     f"{human_count(model.stated_params)} parameters")
    task, method = _task(req, notes)
    gpu = find_gpu(req.gpu) if req.gpu else None
    par = _parallelism(req, task, gpu, model, notes)
    seq = _sequence_length(req, model.arch, notes)
    no_bf16 = gpu is not None and gpu.bf16_dense_tflops is None  # V100, T4: fp16 instead
    precision = req.precision or ("fp16_mixed" if no_bf16 else "bf16_mixed")
    optimizer = req.optimizer or "adamw"
    framework = req.framework or "deepspeed"
    check_recipe(precision, optimizer, framework)
    if task != "infer":
        if req.micro_batch is None:
            notes.append("micro-batch 1 per GPU")
        if req.precision is None:
            notes.append("fp16 mixed precision with fp32 master weights (no bf16 on this GPU)"
                         if no_bf16 else "bf16 mixed precision with fp32 master weights")
        if req.optimizer is None:
            notes.append("AdamW (fp32 moments)")
        if req.framework is None:
            notes.append("DeepSpeed-style accounting (bf16 grads); Megatron keeps fp32 grads: "
                         "framework=megatron")
        if req.flash_attn is None:
            notes.append("FlashAttention / SDPA on (no s x s attention matrices)")
    megatron_like = par.tp > 1 or par.pp > 1 or par.sequence_parallel
    act_model = req.activation_model or ("megatron" if megatron_like else "hf")
    _choice("activation_model", act_model, ACTIVATION_MODELS)
    if req.activation_model is None and task != "infer":
        notes.append(f"activation profile: {act_model} ("
                     + ("Megatron-LM/Transformer Engine kernels" if act_model == "megatron"
                        else "Hugging Face transformers modules") + ")")
    quant = req.quantization or ("nf4" if method == "qlora" else "none")
    check_quantization(quant)
    kv_dtype = req.kv_cache_dtype or "auto"
    check_kv_dtype(kv_dtype)
    lora_targets = _choice("lora_targets", req.lora_targets or "all_linear", LORA_TARGETS)
    if method in ("lora", "qlora") and req.lora_targets is None:
        notes.append("LoRA on all linear layers")
    if method in ("lora", "qlora") and req.lora_rank is None:
        notes.append("LoRA rank 16")
    overhead_model = _choice("overhead_model", req.overhead_model or "measured", OVERHEAD_MODELS)
    context = req.cuda_context_bytes
    reserve = req.allocator_reserve
    if overhead_model == "measured" and task != "infer" and (context is None or reserve is None):
        context = default_context_bytes(par.gpus) if context is None else context
        reserve = ALLOCATOR_RESERVE if reserve is None else reserve
        notes.append(f"overhead: CUDA context{' + NCCL' if par.gpus > 1 else ''} "
                     f"{context / GiB:.1f} GiB + {reserve:.0%} allocator reserve")
    job = Job(
        arch=model.arch, model_id=model.model_id, param_scale=model.param_scale,
        task=cast(Task, task), finetune_method=cast(FinetuneMethod, method),
        seq_len=seq, micro_batch=req.micro_batch or 1, global_batch=req.global_batch or 0,
        precision=precision, optimizer=optimizer, framework=framework, parallel=par,
        recompute=cast(Recompute, _recompute(req, method, notes)),
        flash_attn=True if req.flash_attn is None else req.flash_attn,
        offload=cast(Offload, _offload(req, par)),
        lora_rank=req.lora_rank or 16, lora_targets=lora_targets, quantization=quant,
        kv_cache_dtype=kv_dtype, batch=req.batch or req.concurrent or 1, gpu=gpu,
        activation_model=act_model, overhead_model=overhead_model,
        cuda_context_bytes=default_context_bytes(par.gpus) if context is None else context,
        allocator_reserve=ALLOCATOR_RESERVE if reserve is None else reserve,
    )
    return Resolved(job, model, notes)
