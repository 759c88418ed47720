"""The DeepSpeed config (``ds_config.json``) of a plan.

Keys as DeepSpeed 0.19.8 reads them (``deepspeed/runtime/config.py``, ``zero/config.py``,
``zero/offload_config.py``, ``precision_config.py``). The batch keys satisfy DeepSpeed's own
check: train_batch_size = micro-batch x accumulation x data-parallel size. Written for the
Hugging Face Trainer (``TrainingArguments(deepspeed="ds_config.json")``), which fills the
optimizer's ``"auto"`` values from its own arguments.
"""

from __future__ import annotations

import json
from typing import Any

from service.core.job.choices import optimizer_name
from service.core.launch.launch_shape import LaunchShape
from service.core.launch.launch_types import LaunchConfig
from service.core.launch.training_arguments import hf_optim
from service.core.memory.transients import DEEPSPEED_REDUCE_BUCKET
from service.core.planning.plan_types import Layout

FILENAME = "ds_config.json"
GRADIENT_CLIPPING = 1.0  # the Trainer's max_grad_norm default


def _precision(shape: LaunchShape, pure_16bit: bool) -> dict[str, Any]:
    if shape.precision == "fp16":
        return {"fp16": {"enabled": True, "loss_scale": 0, "initial_scale_power": 16}}
    if shape.precision in ("bf16", "fp8"):
        section: dict[str, Any] = {"enabled": True}
        if pure_16bit:  # no fp32 master weights: DeepSpeed's bf16 master weights and states
            section |= {"bf16_master_weights_and_grads": True, "bf16_optimizer_states": True}
        return {"bf16": section}
    return {}


def _zero(layout: Layout) -> dict[str, Any]:
    zero: dict[str, Any] = {"stage": layout.zero_stage, "overlap_comm": True,
                            "contiguous_gradients": True}
    if layout.zero_stage in (1, 2):  # the two reduce buffers the estimate counts
        zero["reduce_bucket_size"] = DEEPSPEED_REDUCE_BUCKET
    pinned = {"device": "cpu", "pin_memory": True}
    if layout.offload in ("optimizer", "optimizer_and_params"):
        zero["offload_optimizer"] = dict(pinned)
    if layout.offload == "optimizer_and_params":
        zero["offload_param"] = dict(pinned)
    if layout.zero_stage == 3:
        zero["stage3_gather_16bit_weights_on_model_save"] = True
    return zero


def deepspeed_config(layout: Layout, shape: LaunchShape, precision: str,
                     moe: bool = False, optimizer: str = "adamw") -> LaunchConfig:
    config: dict[str, Any] = {
        "train_batch_size": shape.global_batch,
        "train_micro_batch_size_per_gpu": shape.micro_batch,
        "gradient_accumulation_steps": shape.accumulation,
        "gradient_clipping": GRADIENT_CLIPPING,
        **_precision(shape, precision in ("bf16", "fp16")),
        "zero_optimization": _zero(layout),
    }
    notes = ["use it with the Hugging Face Trainer (--deepspeed ds_config.json) or "
             "deepspeed.initialize(config=...)"]
    if layout.offload != "none":
        # ZeRO-Offload steps the optimizer on the CPU: DeepSpeed's CPU Adam, built from this
        # section (a client optimizer is refused while zero_force_ds_cpu_optimizer is on)
        config["optimizer"] = {"type": "AdamW", "params": {
            "lr": "auto", "betas": "auto", "eps": "auto", "weight_decay": "auto"}}
        notes.append("the optimizer's \"auto\" values come from TrainingArguments; in a plain "
                     "DeepSpeed script write your learning rate, betas, eps and weight decay")
    elif optimizer_name(optimizer).bitsandbytes and layout.zero_stage >= 1:
        # a client optimizer under ZeRO: DeepSpeed refuses it unless allowed (the Trainer sets
        # this itself; a plain deepspeed.initialize does not)
        config["zero_allow_untested_optimizer"] = True
        notes.append(f"the {optimizer} optimizer is the Trainer's: --optim {hf_optim(optimizer)}")
    if layout.recompute == "full":
        notes.append("activation recompute is the model's: TrainingArguments("
                     "gradient_checkpointing=True) or model.gradient_checkpointing_enable()")
    if moe and layout.zero_stage == 3:
        # ZeRO-3 prefetches parameters in the order modules ran last time; routing changes it
        notes.append("MoE under ZeRO-3: mark the model's sparse MoE block as a leaf "
                     "(deepspeed.utils.set_z3_leaf_modules(model, [MixtralSparseMoeBlock]) or "
                     "the model's own block class), or steps can hang (DeepSpeed PR #4966)")
    if shape.precision == "fp8":
        notes.append("fp8 matmuls come from Transformer Engine in the model; DeepSpeed runs bf16")
    return LaunchConfig("deepspeed", "DeepSpeed config", "json", FILENAME,
                        json.dumps(config, indent=2) + "\n", config, (), tuple(notes))
