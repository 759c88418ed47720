"""Resolve a request once: every default filled into a concrete ``Job``, each one written down
as an ``Assumption`` record (stated, default or derived, and why)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from service.core.errors import InvalidInput
from service.core.hardware.gpus import Gpu, find_gpu
from service.core.job.assumptions import Assumption, default, derived, stated
from service.core.job.choices import (
    ACTIVATION_MODELS,
    FINETUNE_METHODS,
    LORA_TARGETS,
    OFFLOADS,
    OVERHEAD_MODELS,
    PLANNER_METHODS,
    RECOMPUTE,
    TASKS,
    WITH_REFERENCE,
    check_recipe,
    choice,
    serving_framework,
    weight_format_of_precision,
)
from service.core.job.model_notes import model_notes
from service.core.job.objective import resolve_objective
from service.core.job.request import EstimateRequest
from service.core.job.resolve_layout import parallelism
from service.core.job.resolve_notes import Notes
from service.core.job.spec import (
    PIPELINE_MICRO_BATCHES_PER_STAGE,
    FinetuneMethod,
    Job,
    Offload,
    Parallelism,
    Recompute,
    Task,
)
from service.core.job.training_stack import default_framework
from service.core.model.formats import check_kv_dtype, check_weight_format, checkpoint_format
from service.core.model.lookup import ResolvedModel, resolve_model
from service.core.model.presets import lookup_preset
from service.core.units import human_count

DEFAULT_SEQ_LEN = 4096
DEFAULT_HEADROOM = 0.95  # plan to at most 95% of usable memory (fragmentation, spikes)
DEFAULT_GPUS_PER_NODE = 8
# the request fields that set how a training job is laid out on its GPUs (the framework alone
# does not: each stack runs many layouts)
LAYOUT_KNOBS = frozenset({"zero_stage", "tp", "pp", "cp", "ep", "sequence_parallel", "recompute",
                          "micro_batch", "offload", "virtual_stages", "pp_schedule",
                          "shard_group"})


@dataclass(frozen=True, slots=True)
class ResolvedJob:
    """A request resolved once: the job, the model, what was assumed, and the planner's and the
    time estimate's settings. ``stated`` names the request fields the user gave."""

    job: Job
    model: ResolvedModel
    assumptions: tuple[Assumption, ...]
    stated: frozenset[str]
    given_gpus: int | None  # gpu_count or nodes stated: the planner works on this count
    gpus_per_node: int
    headroom: float
    method: str
    tokens: float | None
    mfu: float | None
    price_per_gpu_hour: float | None

    def pinned(self, name: str) -> bool:
        """Whether the user fixed this request field (the planner keeps it)."""
        return name in self.stated

    @property
    def layout_stated(self) -> bool:
        """Whether the user set any of the layout (else the job's layout is fitcheck's defaults,
        and on given GPUs the planner's best layout is the answer)."""
        return not LAYOUT_KNOBS.isdisjoint(self.stated)


def _task(req: EstimateRequest, notes: Notes) -> tuple[Task, FinetuneMethod]:
    task = req.task
    if task is None:
        if req.lora_slots:
            task, why = "infer", "LoRA adapters to serve (lora_slots)"
        elif req.max_num_seqs:
            task, why = "infer", "a serving engine's cap on sequences (max_num_seqs)"
        elif req.lora_rank or req.finetune_method or req.objective not in (None, "sft"):
            task, why = "finetune", "a LoRA rank, fine-tuning method or preference objective"
        elif req.quantization and req.quantization != "nf4":
            task, why = "infer", "a serving quantization was given"
        else:
            task, why = "train", "no task named"
        notes.add(derived("task", task, why) if task != "train" else default("task", task, why))
    else:
        notes.add(stated("task", task))
    choice("task", task, TASKS)
    method = req.finetune_method
    if task == "train" and method in ("lora", "qlora"):  # contradictory, not to be guessed at
        raise InvalidInput("finetune_method", f"{method} is a fine-tuning method and the task is "
                           "train (full training of every weight)", "task finetune, or no task")
    if method == "qlora" and req.quantization not in (None, "nf4", "int4"):
        raise InvalidInput("quantization", f"QLoRA's base is 4-bit NF4, not {req.quantization}",
                           "nf4 (or none) with finetune_method qlora")
    if task == "finetune":
        if method is None:
            if req.lora_rank is None:
                method, why = "full", "no LoRA rank given"
            elif req.quantization in ("nf4", "int4"):
                method, why = "qlora", "LoRA over a 4-bit base"
            else:
                method, why = "lora", "a LoRA rank was given"
            notes.add(derived("finetune_method", method, why))
        else:
            notes.add(stated("finetune_method", method))
    return cast(Task, task), cast(FinetuneMethod, choice("finetune_method", method or "full",
                                                          FINETUNE_METHODS))


def _recompute(req: EstimateRequest, task: str, method: str, notes: Notes) -> Recompute:
    if req.recompute is not None:
        notes.add(stated("recompute", req.recompute))
        return cast(Recompute, choice("recompute", req.recompute, RECOMPUTE))
    if task == "infer":
        return "none"
    if method == "qlora":
        notes.add(derived("recompute", "full", "peft's prepare_model_for_kbit_training turns "
                          "gradient checkpointing on", "peft utils/other.py"))
        return "full"
    notes.add(default("recompute", "none", "no activation recompute unless asked"))
    return "none"


def _sequence_length(req: EstimateRequest, model: ResolvedModel, notes: Notes) -> int:
    """The stated length, else 4096 tokens or the shorter context the model was trained for; a
    learned position table (GPT-2) caps both."""
    arch = model.arch
    limit = arch.max_positions if arch.positions == "learned" else 0
    if req.seq_len is not None:
        if limit and req.seq_len > limit:
            raise InvalidInput("seq_len", f"{req.seq_len:,} tokens exceed the model's {limit:,} "
                               "learned positions", f"1..{limit:,}")
        notes.add(stated("seq_len", req.seq_len))
        return req.seq_len
    if limit and limit < DEFAULT_SEQ_LEN:
        notes.add(derived("seq_len", limit, "the model's learned position table"))
        return limit
    preset = lookup_preset(model.model_id)
    trained = preset.max_context if preset is not None else None
    if trained is not None and trained < DEFAULT_SEQ_LEN:  # Falcon 40B, Pythia: 2,048
        notes.add(derived("seq_len", trained, "the context the model was trained for (its "
                          "config's max_position_embeddings)"))
        return trained
    notes.add(default("seq_len", DEFAULT_SEQ_LEN, "a common training and serving length"))
    return DEFAULT_SEQ_LEN


def _precision(req: EstimateRequest, task: str, gpu: Gpu | None, notes: Notes) -> str:
    if req.precision is not None:
        if task != "infer" and req.precision.startswith("bf16") and gpu is not None \
                and gpu.bf16_dense_tflops is None:  # torch.cuda.is_bf16_supported() is False
            notes.add(derived("precision", "fp16_mixed", f"bf16 was asked, but the {gpu.name} has "
                              "no bf16 (transformers refuses bf16=True there): sized in fp16 "
                              "mixed precision"))
            return "fp16_mixed"
        notes.add(stated("precision", req.precision))
        return req.precision
    if task == "infer":
        return "bf16"
    if gpu is not None and gpu.bf16_dense_tflops is None:
        notes.add(derived("precision", "fp16_mixed", f"the {gpu.name} has no bf16 tensor cores"))
        return "fp16_mixed"
    notes.add(default("precision", "bf16_mixed", "bf16 compute with fp32 master weights, the "
                      "usual recipe"))
    return "bf16_mixed"


def _serving_weights(req: EstimateRequest, model: ResolvedModel, notes: Notes,
                     gpu: Gpu | None = None) -> str:
    """Serving weights: the stated quantization, else the stated precision's dtype, else the
    checkpoint's native format (bf16 on a GPU without bf16 is loaded as fp16: vLLM's dtype
    "auto" casts it, the same 2 bytes)."""
    if req.quantization is not None:
        notes.add(stated("quantization", req.quantization))
        stated_fmt = check_weight_format(req.quantization)
        fmt = checkpoint_format(stated_fmt, model.weight_format)
        if fmt == "fp8-ffn" and model.arch.moe is not None:
            raise InvalidInput("quantization", "fp8-ffn is the layout of dense checkpoints "
                               "(Meta's Llama 3.1 405B FP8): a mixture-of-experts model's "
                               "feed-forward layers are its experts", "fp8, fp8-block, mxfp4, "
                               "int8, int4, awq, gptq")
        if fmt != stated_fmt:
            notes.add(derived("quantization", fmt, f"the checkpoint's own {fmt} weights"))
        return fmt
    if req.precision is not None:
        fmt = weight_format_of_precision(req.precision)
        notes.add(derived("quantization", fmt, f"weights in the stated precision {req.precision}"))
        return fmt
    fmt = model.weight_format
    if fmt == "bf16" and gpu is not None and gpu.bf16_dense_tflops is None:
        notes.add(derived("quantization", "fp16", f"the {gpu.name} has no bf16: the bf16 "
                          "checkpoint is loaded as fp16"))
        return "fp16"
    notes.add(default("quantization", fmt, "the checkpoint's native weight format"))
    return fmt


def _training_knobs(req: EstimateRequest, method: str, notes: Notes, gpu: Gpu | None) -> None:
    notes.value("micro_batch", 1, "one sequence per GPU per forward pass")
    if req.global_batch is not None:
        notes.add(stated("global_batch", req.global_batch))
    notes.value("optimizer", "adamw", "AdamW with fp32 moments")
    notes.value("flash_attn", True, SDPA_BEFORE_AMPERE if gpu is not None
                and gpu.bf16_dense_tflops is None else "FlashAttention / SDPA: no s x s "
                "attention matrices")
    notes.value("chunked_loss", False, "the loss over the full logits in fp32 (transformers' "
                "default)", minor=True)
    notes.value("offload", "none", "no CPU offload unless asked", minor=True)
    if method in ("lora", "qlora"):
        notes.value("lora_rank", 16, "a common LoRA rank")
        notes.value("lora_targets", "all_linear", "peft target_modules='all-linear'")


def _global_batch(req: EstimateRequest, par: Parallelism, task: str, notes: Notes) -> int:
    """The stated global batch; with a pipeline and none stated, PIPELINE_MICRO_BATCHES_PER_STAGE
    micro-batches per stage in a step (one micro-batch would leave the pipeline mostly idle and
    its first stage holding one micro-batch's activations, not pp of them); else 0: one
    micro-batch per data-parallel rank."""
    micro = req.micro_batch or 1  # whatever the data-parallel size, whole micro-batches
    if req.global_batch is not None and task != "infer" and req.global_batch % micro:
        raise InvalidInput("global_batch", f"{req.global_batch} sequences do not split into "
                           f"micro-batches of {micro}", f"a multiple of the micro-batch ({micro})")
    if req.global_batch is not None or par.pp == 1 or task == "infer":
        return req.global_batch or 0
    batch = (req.micro_batch or 1) * par.dp * PIPELINE_MICRO_BATCHES_PER_STAGE * par.pp
    notes.add(derived("global_batch", batch, f"{PIPELINE_MICRO_BATCHES_PER_STAGE} micro-batches "
                      f"per pipeline stage in a step ({PIPELINE_MICRO_BATCHES_PER_STAGE * par.pp} "
                      "in all): the bubble (pp - 1) / m stays under 25%",
                      "Narayanan et al. 2021, sec. 2.2"))
    return batch


# V100 and T4 (no bf16: before Ampere) have no FlashAttention 2; PyTorch's SDPA runs its
# memory-efficient kernel there, which keeps no s x s matrices either
SDPA_BEFORE_AMPERE = ("PyTorch SDPA's memory-efficient kernel (FlashAttention 2 needs Ampere or "
                      "newer): no s x s attention matrices")
FRAMEWORK_WHY = {
    "hf": "Hugging Face Trainer with peft, the usual LoRA stack",
    "deepspeed": "DeepSpeed-style accounting: bf16 gradients, fp32 master weights in the optimizer",
    "megatron": "Megatron-LM runs the stated tensor/pipeline/context parallelism: fp32 gradients, "
                "fp32 master weights in its distributed optimizer",
    "fsdp": "FSDP2 (torchtitan) runs TP/CP with sharded states: fp32 sharded parameters",
}


def _offload(req: EstimateRequest, par: Parallelism) -> Offload:
    """Optimizer offload works with any ZeRO stage; parameter offload only with ZeRO-3
    (DeepSpeed ``offload_param``, FSDP ``CPUOffload``), which gathers layers as it goes."""
    offload = choice("offload", req.offload or "none", OFFLOADS)
    if offload == "optimizer_and_params" and par.zero_stage < 3:
        raise InvalidInput("offload", "offloading parameters needs ZeRO-3 (zero_stage 3)",
                           "none or optimizer at ZeRO 0-2; optimizer_and_params with zero_stage 3")
    return cast(Offload, offload)


def resolve(req: EstimateRequest) -> ResolvedJob:
    notes = Notes(req)
    model = resolve_model(req.model, req.params_b, req.arch)
    if model.stated_params:
        notes.add(derived("model", model.label, f"{model.description}; model states use the "
                          f"stated {human_count(model.stated_params)} parameters"))
    else:
        notes.add(stated("model", model.model_id))
    task, method = _task(req, notes)
    gpu = find_gpu(req.gpu) if req.gpu else None
    if gpu is not None:
        notes.add(stated("gpu", gpu.id))
    per_node = req.gpus_per_node or (gpu.gpus_per_node if gpu else DEFAULT_GPUS_PER_NODE)
    if req.nodes is not None and req.gpu_count is not None and not req.gpus_per_node \
            and req.gpu_count % req.nodes == 0:
        # "16 GPUs on 4 nodes": nodes of 4, not the catalog's 8 (2 nodes)
        per_node = req.gpu_count // req.nodes
        notes.add(derived("gpus_per_node", per_node, f"{req.gpu_count} GPUs over {req.nodes} "
                          "nodes"))
    elif req.nodes is not None:
        notes.value("gpus_per_node", per_node, "the catalog's usual server size")
    if req.gpu_count is not None or req.nodes is not None:
        notes.add(stated("gpu_count" if req.gpu_count is not None else "nodes",
                         req.gpu_count if req.gpu_count is not None else req.nodes or 0))
    par = parallelism(req, task, per_node, model, notes)
    seq = _sequence_length(req, model, notes)
    precision = _precision(req, task, gpu, notes)
    optimizer = req.optimizer or "adamw"
    recompute = _recompute(req, task, method, notes)
    framework = req.framework or default_framework(task, method, par, recompute, model.model_id,
                                                    req.quantization)
    if task == "infer":
        serving_framework(framework)
        if req.framework is not None:
            notes.add(stated("framework", framework))
        else:
            notes.add(default("framework", framework, "a vLLM-style server: KV cache sized to "
                              "gpu_memory_utilization"))
        quant = _serving_weights(req, model, notes, gpu)
        if req.lora_slots:
            notes.add(stated("lora_slots", req.lora_slots))
            notes.value("lora_rank", 16, "vLLM's default --max-lora-rank")
    else:
        check_recipe(precision, optimizer, framework, par.tp * par.pp * par.cp > 1)
        notes.value("framework", framework, FRAMEWORK_WHY.get(framework, ""))
        _training_knobs(req, method, notes, gpu)
        quant = check_weight_format(req.quantization or ("nf4" if method == "qlora" else "none"))
    kv_dtype = check_kv_dtype(req.kv_cache_dtype or "auto")
    if task == "infer":
        notes.value("kv_cache_dtype", "auto", "the model's 16-bit dtype")
        if req.concurrent is not None or req.batch is not None:
            notes.add(stated("concurrent" if req.concurrent is not None else "batch",
                             req.concurrent or req.batch or 1))
        elif req.max_num_seqs:
            notes.add(default("concurrent", 1, "the engine starts when one full-length sequence "
                              "fits; --max-num-seqs is a cap, not a need"))
        else:
            notes.add(default("concurrent", 1, "one sequence at a time"))
        if req.max_num_seqs:
            notes.add(stated("max_num_seqs", req.max_num_seqs))
    megatron_like = par.tp > 1 or par.pp > 1 or par.sequence_parallel
    act_model = choice("activation_model",
                       req.activation_model or ("megatron" if megatron_like else "hf"),
                       ACTIVATION_MODELS)
    if task != "infer":
        notes.value("activation_model", act_model,
                    "Megatron-LM/Transformer Engine kernels" if act_model == "megatron"
                    else "Hugging Face transformers modules", minor=True)
    overhead_model = choice("overhead_model", req.overhead_model or "measured", OVERHEAD_MODELS)
    notes.value("overhead_model", overhead_model, "CUDA context and allocator reserve as "
                "measured on real runs", minor=True)
    lora_targets = choice("lora_targets", req.lora_targets or "all_linear", LORA_TARGETS)
    method_name = choice("method", req.method or "planner", PLANNER_METHODS)
    objective = resolve_objective(req.objective, task, method != "full",
                                  bool(req.precompute_ref_log_probs), notes)
    notes.items += model_notes(model, task, method, precision, seq)
    job = Job(
        arch=model.arch, model_id=model.model_id, param_scale=model.param_scale,
        task=task, finetune_method=method, objective=objective, seq_len=seq,
        precomputed_reference=bool(req.precompute_ref_log_probs) and objective in WITH_REFERENCE,
        micro_batch=req.micro_batch or 1,
        global_batch=_global_batch(req, par, task, notes), precision=precision,
        optimizer=optimizer,
        framework=framework, parallel=par, recompute=recompute,
        flash_attn=True if req.flash_attn is None else req.flash_attn,
        chunked_loss=bool(req.chunked_loss),
        offload=_offload(req, par), lora_rank=req.lora_rank or 16, lora_targets=lora_targets,
        lora_slots=(req.lora_slots or 0) if task == "infer" else 0,
        quantization=quant, kv_cache_dtype=kv_dtype, batch=req.batch or req.concurrent or 1,
        max_num_seqs=(req.max_num_seqs or 0) if task == "infer" else 0,
        gpu=gpu, activation_model=act_model, overhead_model=overhead_model,
        cuda_context_bytes=req.cuda_context_bytes, allocator_reserve=req.allocator_reserve,
    )
    given = par.gpus if (req.gpu_count is not None or req.nodes is not None) else None
    return ResolvedJob(
        job=job, model=model, assumptions=tuple(notes.items), stated=frozenset(req.stated()),
        given_gpus=given, gpus_per_node=per_node,
        headroom=req.memory_headroom if req.memory_headroom is not None else DEFAULT_HEADROOM,
        method=method_name, tokens=req.tokens, mfu=req.mfu,
        price_per_gpu_hour=req.price_per_gpu_hour,
    )
