"""Which training stack runs a layout when the request names none: Megatron-LM for tensor,
pipeline or context parallelism with at most ZeRO-1 (its distributed optimizer), FSDP2
(torchtitan) for those with sharded states, DeepSpeed for data parallelism alone; expert
parallelism in Megatron-LM or torchtitan; selective
recompute is Megatron-LM's, or torchtitan's for the models torchtitan ships. The resolved job
(its as-stated figures) and the planner (``planning/stacks.py``) use this one rule."""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files

from service.core.job.choices import llamacpp_serves
from service.core.job.spec import Parallelism
from service.core.model.presets import all_presets


@cache
def torchtitan_models() -> dict[str, tuple[str, str]]:
    """Preset id -> (torchtitan model name, flavor) for the models torchtitan ships, and for
    the published checkpoints of their architectures (``same_as``: DeepSeek-R1 is V3's)."""
    raw = json.loads(files("service.data").joinpath("torchtitan_models.json")
                     .read_text(encoding="utf-8"))
    shipped = {key: (value[0], value[1]) for key, value in raw["models"].items()}
    return shipped | {p.id: shipped[p.same_as] for p in all_presets() if p.same_as in shipped}


def layout_stack_id(tp: int, pp: int, cp: int, zero_stage: int, recompute: str,
                    torchtitan_ships: bool, ep: int = 1) -> str:
    """The stack id for a layout: "megatron", "fsdp" or "deepspeed". Expert parallelism runs in
    Megatron-LM (--expert-model-parallel-size), or in torchtitan (expert_parallel_degree, with
    FSDP) for the MoE models it ships: the Trainer, accelerate and DeepSpeed's ZeRO have none
    for Hugging Face MoE layers."""
    if ep > 1:
        return "fsdp" if torchtitan_ships and zero_stage >= 2 and pp == 1 else "megatron"
    model_parallel = tp * pp * cp > 1
    selective = recompute == "selective"
    if zero_stage >= 2 and (model_parallel or selective):
        # torchtitan for the models it ships; otherwise Megatron-FSDP: accelerate's tensor
        # parallelism (transformers' TP plans) keeps norm inputs and the logits whole on every
        # rank and its context parallelism takes causal masks only, which these layouts'
        # sequence-parallel, vocab-parallel figures do not describe
        return "fsdp" if torchtitan_ships else "megatron"
    if model_parallel or selective:
        return "megatron"
    return "deepspeed"


def trainer_backend(zero_stage: int, offload: str) -> str:
    """What the Hugging Face Trainer (accelerate) runs a layout's training states with, as its
    accelerate config launches it: DeepSpeed for ZeRO-1 and CPU offload (bf16 modules, fp32
    master weights in the optimizer), FSDP2 for ZeRO-2/3 (fp32 shards, 16-bit all-gathered),
    plain DDP with autocast over fp32 parameters (``"hf"``) otherwise."""
    if zero_stage == 1 or offload != "none":
        return "deepspeed"
    return "fsdp" if zero_stage >= 2 else "hf"


def default_framework(task: str, method: str, par: Parallelism, recompute: str,
                       model_id: str, quantization: str | None) -> str:
    """vLLM for serving (llama.cpp for GGUF files), the Trainer with peft for adapters, else
    the stack that runs the stated layout (``layout_stack_id``, the planner's rule)."""
    if task == "infer":
        return "llamacpp" if llamacpp_serves(None, quantization) else "vllm"
    if method in ("lora", "qlora"):
        return "hf"
    return layout_stack_id(par.tp, par.pp, par.cp, par.zero_stage, recompute,
                           model_id in torchtitan_models(), par.ep)
