"""torchtitan's TOML job config for a plan (torchtitan 0.2.2 ``torchtitan/config/job_config.py``;
0.2.2 is the last release that reads TOML). Only for the models torchtitan ships
(``service/data/torchtitan_models.json``)."""

from __future__ import annotations

from typing import Any

import tomli_w

from service.core.job.spec import Job
from service.core.job.training_stack import torchtitan_models
from service.core.launch.launch_shape import LaunchShape, ModelRef
from service.core.launch.launch_types import LaunchConfig
from service.core.planning.plan_types import Layout

FILENAME = "fitcheck_torchtitan.toml"
PARAM_DTYPE = {"bf16": "bfloat16", "fp16": "bfloat16", "fp8": "bfloat16", "fp32": "float32"}


def torchtitan_model(job: Job) -> tuple[str, str] | None:
    return torchtitan_models().get(job.model_id)


def torchtitan_config(job: Job, layout: Layout, shape: LaunchShape, ref: ModelRef
                      ) -> LaunchConfig | None:
    model = torchtitan_model(job)
    # torchtitan trains every weight: it has no LoRA/PEFT (its model converters are float8 and MX)
    if model is None or layout.offload != "none" or layout.pp > 1 or not job.trains_all_weights:
        return None
    sharded = layout.zero_stage >= 2
    repo_dir = ref.path.rsplit("/", 1)[-1]
    checkpoint: dict[str, Any] = {"mode": layout.recompute}
    if layout.recompute == "selective":
        checkpoint["selective_ac_option"] = "op"
    config: dict[str, Any] = {
        "job": {"dump_folder": "./outputs",
                "description": f"{job.model_id}: {layout.describe()} on {layout.gpus} GPUs"},
        "model": {"name": model[0], "flavor": model[1],
                  "hf_assets_path": f"./assets/hf/{repo_dir}"},
        "optimizer": {"name": "AdamW", "implementation": "fused"},
        "training": {"local_batch_size": shape.micro_batch,
                     "global_batch_size": shape.global_batch,
                     "seq_len": job.seq_len,
                     "mixed_precision_param": PARAM_DTYPE[shape.precision]},
        "parallelism": {"data_parallel_shard_degree": layout.dp if sharded else 1,
                        "data_parallel_replicate_degree": 1 if sharded else layout.dp,
                        "fsdp_reshard_after_forward": "always" if layout.zero_stage == 3
                        else "never",
                        "tensor_parallel_degree": layout.tp,
                        "context_parallel_degree": layout.cp,
                        "expert_parallel_degree": layout.ep,
                        "pipeline_parallel_degree": 1},
        "activation_checkpoint": checkpoint,
    }
    notes = [f"download the tokenizer and config with torchtitan's scripts/download_hf_assets.py "
             f"--repo_id {ref.path} --local_dir ./assets/hf", "add your dataset and steps under "
             "[training]; run it with the torchrun line below"]
    if job.task == "finetune":  # start from the released weights, not from random ones
        config["checkpoint"] = {"enable": True, "initial_load_path": f"./assets/hf/{repo_dir}",
                                "initial_load_in_hf": True, "initial_load_model_only": True}
        notes.append("fine-tuning loads the Hugging Face weights: download them too "
                     "(download_hf_assets.py --assets safetensors)")
    if shape.precision == "fp8":
        # torchao float8 linears; compiled, which fuses the scaling and casting kernels
        config["model"]["converters"] = ["quantize.linear.float8"]
        config["quantize"] = {"linear": {"float8": {
            "enable_fsdp_float8_all_gather": sharded,
            "precompute_float8_dynamic_scale_for_fsdp": sharded}}}
        config["compile"] = {"enable": True}
        notes.append("fp8 linears come from torchao (pip install torchao); H100 or newer")
    return LaunchConfig("torchtitan", "torchtitan job config", "toml", FILENAME,
                        tomli_w.dumps(config), config, (), tuple(notes))
