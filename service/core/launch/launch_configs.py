"""The launch configs that apply to a plan, keyed by tool.

Training, by the plan's stack (``planning/stacks.py``), the stack's own config first:
- DeepSpeed: ``deepspeed`` (ds_config.json), ``accelerate`` (its DeepSpeed launch) and
  ``torchrun`` (the script with TrainingArguments flags);
- Hugging Face Trainer / accelerate: ``accelerate`` (FSDP2, DDP or DeepSpeed by the layout),
  ``deepspeed`` when the layout runs through it, ``torchrun`` for data parallelism alone;
- Megatron-LM: ``megatron`` (pretrain_gpt.py arguments) and ``torchrun``;
- FSDP2: ``accelerate`` (not with expert parallelism), and ``torchtitan`` with its ``torchrun``
  line for the models torchtitan ships.
Serving: ``vllm`` and ``sglang`` (those that load the stated formats), unless the request named
Hugging Face ``generate``. Nothing for a plan that does not fit.
"""

from __future__ import annotations

from dataclasses import replace

from service.core.job.resolve import ResolvedJob
from service.core.launch.accelerate_config import accelerate_config, uses_deepspeed
from service.core.launch.deepspeed_config import deepspeed_config
from service.core.launch.launch_shape import SCRIPT, LaunchShape, launch_shape, model_ref
from service.core.launch.launch_types import LaunchConfig
from service.core.launch.megatron_args import megatron_config
from service.core.launch.serving_commands import sglang_config, vllm_config
from service.core.launch.torchrun_line import torchrun_config
from service.core.launch.torchtitan_toml import FILENAME as TORCHTITAN_FILE
from service.core.launch.torchtitan_toml import torchtitan_config
from service.core.launch.training_arguments import as_flags, training_arguments, version_notes
from service.core.planning.layouts import node_count
from service.core.planning.plan_types import Layout, Plan

UNCHECKED = ("no GPU type named: this is the layout as stated, not checked against any GPU's "
             "memory (name the GPU for a layout that fits)")


def launch_configs(resolved: ResolvedJob, plan: Plan | None,
                   stated_fits: bool = False) -> dict[str, LaunchConfig]:
    """The configs of the layout the answer shows: on given GPUs where the request's own layout
    fits, that one (on its stack), else the planner's; with no GPU type (no plan), a training
    job's stated GPU count as laid out (a launcher's flags do not depend on the GPU type)."""
    if plan is None:
        if resolved.job.task == "infer" or not (resolved.pinned("gpu_count")
                                                or resolved.pinned("nodes")):
            return {}
        configs = _training(resolved, stated_layout(resolved), resolved.job.framework)
        return {tool: replace(c, notes=(*c.notes, UNCHECKED)) for tool, c in configs.items()}
    if plan.task != "infer" and plan.mode == "given" and stated_fits:
        return _training(resolved, stated_layout(resolved), resolved.job.framework)
    if not plan.fits:
        return {}
    if plan.task == "infer":
        return _serving(resolved, plan)
    if plan.layout is None:
        return {}
    return _training(resolved, plan.layout, plan.stack)


def _megatron_connections(layout: Layout) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the environment the torchrun line sets, a note): Megatron-LM's validate_args asserts
    CUDA_DEVICE_MAX_CONNECTIONS=1 with TP or CP on GPUs before Blackwell (it orders the
    communication kernels behind the compute they overlap), and that it is not 1 with
    Megatron-FSDP (megatron/training/arguments.py, core_v0.19)."""
    if layout.zero_stage >= 2:  # Megatron-FSDP
        return (), ("leave CUDA_DEVICE_MAX_CONNECTIONS unset: Megatron-FSDP asserts it is not 1",)
    if layout.tp * layout.cp > 1:
        return ("CUDA_DEVICE_MAX_CONNECTIONS=1",), (
            "CUDA_DEVICE_MAX_CONNECTIONS=1: Megatron-LM asserts it with tensor or context "
            "parallelism before Blackwell",)
    return (), ()


def stated_layout(resolved: ResolvedJob) -> Layout:
    """The request's own layout as the planner writes layouts."""
    job, par = resolved.job, resolved.job.parallel
    return Layout(gpus=par.gpus, nodes=node_count(par.gpus, resolved.gpus_per_node), dp=par.dp,
                  tp=par.tp, pp=par.pp, cp=par.cp, ep=par.ep, zero_stage=par.zero_stage,
                  sequence_parallel=par.sequence_parallel, recompute=job.recompute,
                  micro_batch=job.micro_batch, grad_accum=job.grad_accum,
                  global_batch=job.micro_batch * par.dp * job.grad_accum, offload=job.offload)


def _serving(resolved: ResolvedJob, plan: Plan) -> dict[str, LaunchConfig]:
    if plan.stack == "llamacpp":  # llama.cpp's flags are not among the checked tools
        return {}
    if plan.serving is None or plan.stack == "hf":
        return {}
    ref = model_ref(resolved)
    found = {"vllm": vllm_config(resolved, plan.serving, ref),
             "sglang": sglang_config(resolved, plan.serving, ref)}
    order = ("sglang", "vllm") if plan.stack == "sglang" else ("vllm", "sglang")
    return {tool: found[tool] for tool in order if found[tool] is not None}  # type: ignore[misc]


def _training(resolved: ResolvedJob, layout: Layout, stack: str) -> dict[str, LaunchConfig]:
    job = resolved.job
    shape = launch_shape(layout, job.precision)
    ref = model_ref(resolved)
    out: dict[str, LaunchConfig] = {}
    if stack == "megatron":
        out["megatron"] = megatron_config(job, layout, shape, ref)
        env, connections = _megatron_connections(layout)
        out["torchrun"] = torchrun_config(
            shape, list(out["megatron"].argv),
            ("pretrain_gpt.py is Megatron-LM's; add your data and learning-rate arguments",
             *connections), env)
        return out
    deepspeed = uses_deepspeed(layout, stack)
    # torchtitan trains in bf16 (or fp32): not on GPUs without bf16 (V100, T4)
    bf16 = job.gpu is None or job.gpu.bf16_dense_tflops is not None
    titan = torchtitan_config(job, layout, shape, ref) if stack == "fsdp" and bf16 else None
    if stack == "deepspeed":  # the stack's own config first: the bot posts the first
        out["deepspeed"] = deepspeed_config(layout, shape, job.precision,
                                             job.arch.moe is not None, job.optimizer)
    if titan is not None:
        out["torchtitan"] = titan
    if layout.ep == 1:  # accelerate's parallelism_config has no expert parallelism
        out["accelerate"] = accelerate_config(job, layout, shape, stack)
    if deepspeed and "deepspeed" not in out:
        out["deepspeed"] = deepspeed_config(layout, shape, job.precision,
                                             job.arch.moe is not None, job.optimizer)
    if titan is not None:
        out["torchrun"] = torchrun_config(
            shape, ["-m", "torchtitan.train", "--job.config_file", TORCHTITAN_FILE],
            ("torchtitan 0.2.2 (pip install torchtitan==0.2.2)",))
    elif deepspeed or (layout.zero_stage == 0 and layout.tp * layout.cp == 1):
        out["torchrun"] = _trainer_torchrun(resolved, layout, shape, deepspeed)
    if job.finetune_method == "qlora" and layout.zero_stage >= 3 and layout.gpus > 1:
        out = {tool: replace(config, notes=(*config.notes, QLORA_SHARDED))
               for tool, config in out.items()}
    return out


# FSDP-QLoRA (Answer.AI fsdp_qlora; transformers' bitsandbytes docs): FSDP and ZeRO-3 shard
# parameters of one float dtype, so the 4-bit base must be stored in it or every GPU keeps it whole
QLORA_SHARDED = ("load the base with BitsAndBytesConfig(load_in_4bit=True, "
                 "bnb_4bit_quant_storage=torch.bfloat16) so the 4-bit weights are sharded "
                 "(otherwise every GPU holds the whole base)")


def _trainer_torchrun(resolved: ResolvedJob, layout: Layout, shape: LaunchShape,
                      deepspeed: bool) -> LaunchConfig:
    args = training_arguments(resolved.job, layout, shape,
                              deepspeed_file="ds_config.json" if deepspeed else "")
    return torchrun_config(shape, [SCRIPT, *as_flags(args)],
                           (f"{SCRIPT} is your script; it reads the TrainingArguments flags "
                            "with HfArgumentParser", *version_notes(args)))
