"""The software that runs a plan, and the layouts each can run.

- Hugging Face Trainer / accelerate (``hf``): data parallelism sharded with DeepSpeed ZeRO or
  FSDP, plus the tensor and context parallelism accelerate's ``parallelism_config`` adds to
  FSDP2; LoRA and QLoRA through peft without tensor or pipeline parallelism (bitsandbytes
  4-bit layers have no tensor parallelism; FSDP-QLoRA shards the 4-bit base), LoRA with
  context parallelism on sharded states (FSDP2's ``cp_size``);
- DeepSpeed (``deepspeed``): ZeRO stages 0-3 with optimizer and parameter offload;
- Megatron-LM (``megatron``): tensor, pipeline, context and expert parallelism with sequence
  parallelism; the distributed optimizer is ZeRO-1, Megatron-FSDP
  (``--data-parallel-sharding-strategy``) ZeRO-2/3 without pipeline parallelism; no offload,
  no adapters;
- PyTorch FSDP2 (``fsdp``: accelerate, or torchtitan for the models it ships): ZeRO-3, or 2
  without resharding after forward, with tensor and context parallelism, and expert
  parallelism in torchtitan; no offload.
A stated ``framework`` fixes the stack; otherwise each layout takes the stack that runs it:
Megatron-LM for model parallelism with at most ZeRO-1, FSDP2 for model parallelism with sharded
weights or gradients (pipeline parallelism comes with ZeRO-0/1 only, ``layouts.py``), DeepSpeed
for data parallelism alone, the Trainer for adapters; selective recompute only where the stack
has it (Megatron-LM, torchtitan).
"""

from __future__ import annotations

from dataclasses import dataclass

from service.core.hardware.gpus import Gpu
from service.core.job.assumptions import Assumption, derived
from service.core.job.choices import RECOMPUTE, optimizer_name
from service.core.job.resolve import ResolvedJob
from service.core.job.training_stack import layout_stack_id, torchtitan_models
from service.core.planning.plan_types import Layout


@dataclass(frozen=True, slots=True)
class Stack:
    id: str  # the request's framework id
    name: str
    tp: bool  # tensor parallelism
    pp: bool  # pipeline parallelism
    cp: bool  # context parallelism
    zero_stages: tuple[int, ...]
    offload: bool
    adapters: bool  # LoRA and QLoRA
    selective_recompute: bool  # Megatron-LM and torchtitan; the others checkpoint whole layers
    ep: bool = False  # expert parallelism: Megatron-LM, torchtitan for the MoE models it ships


ALL_ZERO = (0, 1, 2, 3)

STACKS: dict[str, Stack] = {
    "hf": Stack("hf", "Hugging Face Trainer / accelerate", True, False, True, ALL_ZERO,
                True, True, False),
    "deepspeed": Stack("deepspeed", "DeepSpeed", False, False, False, ALL_ZERO, True, True,
                       False),
    "megatron": Stack("megatron", "Megatron-LM", True, True, True, ALL_ZERO, False, False,
                      True, True),
    "fsdp": Stack("fsdp", "PyTorch FSDP2 (accelerate or torchtitan)", True, False, True,
                  (0, 2, 3), False, False, True, True),
}


@dataclass(frozen=True, slots=True)
class ModelParallelism:
    """Which model-parallel dimensions the planner may use for a job."""

    tp: bool
    pp: bool
    cp: bool
    ep: bool = True


def _trainer_only(resolved: ResolvedJob) -> bool:
    """With no stated framework, what only the Hugging Face Trainer (with DeepSpeed or FSDP)
    runs: a preference objective (TRL's DPO, KTO, ORPO, ...: Megatron-LM's pretrain_gpt.py and
    torchtitan have no preference loss or reference model; NeMo-RL's Megatron backend does, so
    say the framework) and a bitsandbytes optimizer (8-bit or paged: Megatron-LM and torchtitan
    build their own Adam, so their configs would run 32-bit state)."""
    if resolved.pinned("framework"):
        return False
    return resolved.job.objective != "sft" \
        or optimizer_name(resolved.job.optimizer).bitsandbytes


def stated_stack(resolved: ResolvedJob) -> Stack | None:
    """The stack the request fixed: a stated framework, the Trainer for adapters and for
    preference objectives (TRL), or DeepSpeed for a stated ZeRO-2/3 without model parallelism
    (how people who say "ZeRO-3" run it)."""
    if resolved.pinned("framework") or not resolved.job.trains_all_weights \
            or _trainer_only(resolved):
        if resolved.pinned("framework"):
            return STACKS.get(resolved.job.framework)
        # bitsandbytes optimizers step flat tensors: DeepSpeed's ZeRO partitions (with
        # zero_allow_untested_optimizer), not FSDP2's sharded DTensors (bitsandbytes #1633)
        bnb = optimizer_name(resolved.job.optimizer).bitsandbytes
        return STACKS["deepspeed" if bnb and resolved.job.trains_all_weights else "hf"]
    model_parallel = any(resolved.pinned(k) for k in ("tp", "pp", "cp"))
    if resolved.pinned("zero_stage") and resolved.job.parallel.zero_stage >= 2 \
            and not model_parallel:
        return STACKS["deepspeed"]
    return None


def model_parallelism(resolved: ResolvedJob, gpu: Gpu | None = None) -> ModelParallelism:
    """What the stated stack runs (everything when no stack is fixed); adapters run data
    parallel, and so does a job on a GPU before Ampere with no framework stated: Megatron-LM's
    Transformer Engine and FlashAttention need compute capability 8.0 (no bf16 tensor cores
    before it), and torchtitan trains in bf16, so there the Trainer with DeepSpeed runs it.
    LoRA may also split long sequences: accelerate's context parallelism
    (``ParallelismConfig(cp_size=...)`` on FSDP2, causal attention through SDPA) wraps the
    peft model like any other; QLoRA's 4-bit base stays data parallel."""
    stack = stated_stack(resolved)
    pre_ampere = gpu is not None and gpu.bf16_dense_tflops is None \
        and not resolved.pinned("framework")
    if pre_ampere or _trainer_only(resolved):
        return ModelParallelism(False, False, False, False)
    if not resolved.job.trains_all_weights:
        unsharded = resolved.pinned("zero_stage") and resolved.job.parallel.zero_stage < 2
        lora_cp = resolved.job.finetune_method == "lora" and stack is not None and stack.cp \
            and stack.adapters and not unsharded  # accelerate's CP runs on FSDP2 only
        return ModelParallelism(False, False, lora_cp, False)
    if stack is None:
        return ModelParallelism(True, True, True)
    # FSDP2 runs experts, and tensor parallelism as these figures model it (sequence parallel,
    # a vocab-parallel loss), only in torchtitan, for the models it ships: accelerate's TP
    # (transformers' tp_plan) keeps the norms' inputs and the logits whole on every rank
    titan = stack.id != "fsdp" or resolved.job.model_id in torchtitan_models()
    return ModelParallelism(stack.tp and titan, stack.pp, stack.cp, stack.ep and titan)


def zero_stages(resolved: ResolvedJob) -> tuple[int, ...]:
    """The ZeRO stages of the stated stack (every stage when no stack is fixed). Megatron-LM
    named without a ZeRO stage is its distributed optimizer (ZeRO-1, how Megatron-LM runs at
    scale); its FSDP (ZeRO-2/3, ``--use-megatron-fsdp``) only when a stage says so (review of
    set 28: a 13B on 64 H100s "w/ megatron" had been planned on Megatron-FSDP, borderline,
    where TP=2 with sequence parallelism runs with room)."""
    stack = stated_stack(resolved)
    if stack is None:
        return ALL_ZERO
    if stack.id == "megatron" and not resolved.pinned("zero_stage"):
        return (0, 1)
    return stack.zero_stages


def recomputes(resolved: ResolvedJob) -> tuple[str, ...]:
    """The recompute choices of the stated stack: selective recompute is Megatron-LM's and
    torchtitan's (for the models torchtitan ships); Hugging Face and DeepSpeed checkpoint whole
    layers."""
    stack = stated_stack(resolved)
    if stack is None:
        return RECOMPUTE
    selective = stack.selective_recompute and (
        stack.id != "fsdp" or resolved.job.model_id in torchtitan_models())
    return RECOMPUTE if selective else ("none", "full")


def layout_stack(resolved: ResolvedJob, layout: Layout) -> str:
    """The stack that runs a layout (see the module docstring)."""
    return stack_of_layout(stated_stack(resolved), resolved.job.model_id in torchtitan_models(),
                           layout)


def stack_of_layout(fixed: Stack | None, torchtitan_ships: bool, layout: Layout) -> str:
    """``layout_stack`` with the request's stated stack and whether torchtitan ships the model
    worked out already (the planner asks for thousands of layouts of one request)."""
    if fixed is not None:
        return fixed.id
    return layout_stack_id(layout.tp, layout.pp, layout.cp, layout.zero_stage, layout.recompute,
                           torchtitan_ships, layout.ep)


SERVING_NAMES = {"vllm": "vLLM", "sglang": "SGLang", "hf": "Hugging Face generate",
                 "llamacpp": "llama.cpp (llama-server, ollama)"}


def stack_name(stack_id: str, task: str = "train") -> str:
    if task == "infer":
        return SERVING_NAMES.get(stack_id, stack_id)
    stack = STACKS.get(stack_id)
    return stack.name if stack is not None else stack_id


def stack_assumption(resolved: ResolvedJob, stack_id: str) -> Assumption | None:
    """The record of the stack the plan is for, when the request did not state a framework."""
    if resolved.pinned("framework"):
        return None
    fixed = stated_stack(resolved)
    if fixed is not None:
        why = ("LoRA and QLoRA run in the Trainer with peft" if not resolved.job.trains_all_weights
               else "ZeRO-2/3 without model parallelism is DeepSpeed's data parallelism")
    else:
        why = ("the stack that runs the layout: Megatron-LM for TP/PP/CP with at most ZeRO-1, "
               "FSDP2 for TP/CP with sharded states, DeepSpeed for data parallelism alone")
    return derived("framework", stack_name(stack_id), why)
