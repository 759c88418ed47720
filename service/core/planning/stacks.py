"""The software that runs a plan, and the layouts each can run.

- Hugging Face Trainer / accelerate (``hf``): data parallelism, sharded with DeepSpeed ZeRO or
  FSDP; LoRA and QLoRA through peft (FSDP-QLoRA shards a 4-bit base; bitsandbytes 4-bit has no
  tensor parallelism);
- DeepSpeed (``deepspeed``): ZeRO stages 0-3 with optimizer and parameter offload;
- Megatron-LM (``megatron``): tensor, pipeline, context, expert and sequence parallelism, the
  distributed optimizer (ZeRO-1); no offload, no adapters;
- torchtitan (``fsdp``): FSDP2 (ZeRO-3, or 2 without resharding) with tensor, pipeline, context
  and expert parallelism; no offload, no adapters.
A stated ``framework`` fixes the stack; otherwise each layout takes the stack that runs it:
Megatron-LM with model parallelism and at most ZeRO-1, torchtitan with model parallelism and
sharded weights or gradients, DeepSpeed for data parallelism alone, the Trainer for adapters.
"""

from __future__ import annotations

from dataclasses import dataclass

from service.core.job.assumptions import Assumption, derived
from service.core.job.resolve import ResolvedJob
from service.core.planning.plan_types import Layout


@dataclass(frozen=True, slots=True)
class Stack:
    id: str  # the request's framework id
    name: str
    model_parallel: bool  # tensor, pipeline and context parallelism
    zero_stages: tuple[int, ...]
    offload: bool
    adapters: bool  # LoRA and QLoRA


STACKS: dict[str, Stack] = {
    "hf": Stack("hf", "Hugging Face Trainer / accelerate", False, (0, 1, 2, 3), True, True),
    "deepspeed": Stack("deepspeed", "DeepSpeed", False, (0, 1, 2, 3), True, True),
    "megatron": Stack("megatron", "Megatron-LM", True, (0, 1), False, False),
    "fsdp": Stack("fsdp", "torchtitan (FSDP2)", True, (0, 2, 3), False, False),
}


def stated_stack(resolved: ResolvedJob) -> Stack | None:
    """The stack the request fixed: a stated framework, the Trainer for adapters, or DeepSpeed
    for a stated ZeRO-2/3 without model parallelism (how people who say "ZeRO-3" run it)."""
    if resolved.pinned("framework") or not resolved.job.trains_all_weights:
        return STACKS.get(resolved.job.framework)
    model_parallel = any(resolved.pinned(k) for k in ("tp", "pp", "cp"))
    if resolved.pinned("zero_stage") and resolved.job.parallel.zero_stage >= 2 \
            and not model_parallel:
        return STACKS["deepspeed"]
    return None


def layout_stack(resolved: ResolvedJob, layout: Layout) -> str:
    """The stack that runs a layout (see the module docstring)."""
    fixed = stated_stack(resolved)
    if fixed is not None:
        return fixed.id
    if layout.tp * layout.pp * layout.cp > 1:
        return "fsdp" if layout.zero_stage >= 2 else "megatron"
    return "deepspeed"


def stack_name(stack_id: str) -> str:
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
               "torchtitan (FSDP2) for TP/PP/CP with sharded states, DeepSpeed for data "
               "parallelism alone")
    return derived("framework", stack_name(stack_id), why)
