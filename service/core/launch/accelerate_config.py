"""The accelerate config (``accelerate_config.yaml``) of a plan and its launch command.

Keys as accelerate 1.15 reads them: ``ClusterConfig`` fields at the top level, the launch
argument groups' names inside ``fsdp_config``, ``deepspeed_config`` and
``parallelism_config``. FSDP2 for sharded states (ZeRO-2: no resharding after forward, ZeRO-3:
resharding), DeepSpeed (through ``ds_config.json``) for ZeRO-1 and offload, plain DDP otherwise;
tensor and context parallelism through ``parallelism_config``.
"""

from __future__ import annotations

from typing import Any

import yaml

from service.core.job.spec import Job
from service.core.job.training_stack import trainer_backend
from service.core.launch.launch_shape import SCRIPT, LaunchShape, shell_line
from service.core.launch.launch_types import LaunchConfig
from service.core.launch.training_arguments import as_flags, training_arguments, version_notes
from service.core.planning.plan_types import Layout

FILENAME = "accelerate_config.yaml"
MIXED = {"bf16": "bf16", "fp16": "fp16", "fp32": "no", "fp8": "fp8"}


def uses_deepspeed(layout: Layout, stack: str) -> bool:
    """ZeRO-1 and CPU offload run through DeepSpeed (``trainer_backend``, the rule the memory
    formulas follow); so does the DeepSpeed stack."""
    return stack == "deepspeed" or trainer_backend(layout.zero_stage, layout.offload) == "deepspeed"


def _distributed(layout: Layout, stack: str) -> dict[str, Any]:
    if uses_deepspeed(layout, stack):
        ds: dict[str, Any] = {"deepspeed_config_file": "ds_config.json"}
        if layout.zero_stage == 3:
            ds["zero3_init_flag"] = True
        return {"distributed_type": "DEEPSPEED", "deepspeed_config": ds}
    model_parallel = layout.tp * layout.cp > 1
    if layout.zero_stage >= 2 or model_parallel:
        fsdp = {"fsdp_version": 2, "fsdp_auto_wrap_policy": "TRANSFORMER_BASED_WRAP",
                "fsdp_reshard_after_forward": layout.zero_stage == 3,
                "fsdp_state_dict_type": "SHARDED_STATE_DICT",
                "fsdp_cpu_ram_efficient_loading": True,
                "fsdp_activation_checkpointing": layout.recompute == "full"}
        out: dict[str, Any] = {"distributed_type": "FSDP", "fsdp_config": fsdp}
        if model_parallel or layout.zero_stage < 2:
            sharded = layout.zero_stage >= 2
            out["parallelism_config"] = {
                "parallelism_config_dp_shard_size": layout.dp if sharded else 1,
                "parallelism_config_dp_replicate_size": 1 if sharded else layout.dp,
                "parallelism_config_tp_size": layout.tp,
                "parallelism_config_cp_size": layout.cp}
        return out
    return {"distributed_type": "MULTI_GPU" if layout.gpus > 1 else "NO"}


def accelerate_config(job: Job, layout: Layout, shape: LaunchShape, stack: str) -> LaunchConfig:
    deepspeed = uses_deepspeed(layout, stack)
    # with a deepspeed_config_file the precision is the file's: accelerate refuses a second one
    precision = {} if deepspeed else {"mixed_precision": MIXED[shape.precision]}
    config: dict[str, Any] = {
        "compute_environment": "LOCAL_MACHINE",
        **_distributed(layout, stack),
        **precision,
        "num_machines": shape.nodes,
        "num_processes": shape.gpus,
        "machine_rank": 0,
        "main_training_function": "main",
        "rdzv_backend": "static",
        "same_network": True,
    }
    fsdp = config["distributed_type"] == "FSDP"
    args = training_arguments(job, layout, shape, model_recompute=not fsdp,
                              deepspeed_file="ds_config.json" if deepspeed else "")
    options = ["--config_file", FILENAME]
    if shape.nodes > 1:
        options += ["--machine_rank", "$NODE_RANK", "--main_process_ip", "$MASTER_ADDR",
                    "--main_process_port", "29500"]
    head, script = ["accelerate", "launch"], [SCRIPT, *as_flags(args)]
    argv = [*head, *options, *script]
    notes = [f"{SCRIPT} is your script; it reads the TrainingArguments flags with "
             "HfArgumentParser", "run the same command on every node"
             if shape.nodes > 1 else "one node"]
    if layout.tp > 1:
        notes.append("tensor parallelism needs a model with a tp_plan in transformers")
    notes += version_notes(args)
    text = yaml.safe_dump(config, sort_keys=False)
    return LaunchConfig("accelerate", "accelerate config and launch", "yaml", FILENAME, text,
                        {"config_file": config, "training_arguments": args}, tuple(argv),
                        tuple(notes), command=shell_line(head, options, script))
