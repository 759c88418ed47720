"""The reports the page tests look at: a training job, a serving job (Qwen2.5-72B AWQ, 32k
context, 32 users on RTX 4090s), a job that does not fit on the GPUs given (with fixes), and a
job with no GPU (the catalog), each answered by the engine with its permalink and with launch
configs put in (``dataclasses.replace``), long lines and all, to check the blocks render and fit.
"""

from __future__ import annotations

import json
from dataclasses import replace
from functools import cache
from typing import Any

from service.answers import compute_answer
from service.core.job.request import EstimateRequest
from service.core.launch.launch_types import LaunchConfig
from service.core.report.answer_types import Answer
from service.permalink import link, normalise

BASE = "http://fitcheck.test/"
CASES: dict[str, dict[str, Any]] = {
    "training": {"model": "llama-3-8b", "seq_len": 4096, "zero_stage": 3, "gpu": "a100-40gb",
                 "tokens": 1e12},
    "serving": {"model": "qwen2.5-72b", "task": "infer", "quantization": "awq",
                "seq_len": 32768, "concurrent": 32, "gpu": "rtx4090-24gb"},
    "does-not-fit": {"model": "llama-3.1-70b", "seq_len": 8192, "gpu": "a100-40gb",
                     "gpu_count": 8},
    "catalog": {"model": "llama-3-8b", "seq_len": 4096},
}

DEEPSPEED = {"train_micro_batch_size_per_gpu": 1, "gradient_accumulation_steps": 1,
             "bf16": {"enabled": True},
             "zero_optimization": {"stage": 3, "overlap_comm": True, "contiguous_gradients": True,
                                   "stage3_gather_16bit_weights_on_model_save": True}}
TORCHRUN = ("torchrun", "--nnodes=1", "--nproc_per_node=8", "--rdzv_backend=c10d",
            "--rdzv_endpoint=$MASTER_ADDR:29500", "train.py", "--deepspeed", "ds_config.json",
            "--per_device_train_batch_size=1", "--gradient_checkpointing=true",
            "--max_seq_length=4096", "--bf16=true")
VLLM = ("vllm", "serve", "Qwen/Qwen2.5-72B-Instruct-AWQ", "--quantization", "awq",
        "--tensor-parallel-size", "8", "--pipeline-parallel-size", "3", "--max-model-len",
        "32768", "--max-num-seqs", "32", "--gpu-memory-utilization", "0.90",
        "--distributed-executor-backend", "ray")
ACCELERATE = """compute_environment: LOCAL_MACHINE
distributed_type: FSDP
fsdp_config:
  fsdp_version: 2
  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP
  fsdp_offload_params: true
  fsdp_state_dict_type: SHARDED_STATE_DICT
  fsdp_activation_checkpointing: true
mixed_precision: bf16
num_machines: 1
num_processes: 8
"""


def _launch(case: str) -> dict[str, LaunchConfig]:
    if case == "training":
        return {"deepspeed": LaunchConfig(
                    "deepspeed", "DeepSpeed config", "json", "ds_config.json",
                    json.dumps(DEEPSPEED, indent=2), config=DEEPSPEED,
                    notes=("pass it to your script with --deepspeed ds_config.json",)),
                "torchrun": LaunchConfig(
                    "torchrun", "torchrun command", "shell", None, " ".join(TORCHRUN),
                    argv=TORCHRUN, notes=("train.py is your training script",
                                          "set MASTER_ADDR on every node"))}
    if case == "serving":
        return {"vllm": LaunchConfig("vllm", "vLLM server", "shell", None, " ".join(VLLM),
                                     argv=VLLM, notes=("3 nodes: start a Ray cluster first",))}
    if case == "does-not-fit":
        return {"accelerate": LaunchConfig("accelerate", "Accelerate config (FSDP2)", "yaml",
                                           "accelerate_config.yaml", ACCELERATE)}
    return {}


@cache
def plain_answer(case: str) -> Answer:
    """The engine's answer with its permalink, as the service renders it for a browser."""
    request = normalise(EstimateRequest(**CASES[case]))
    answer = compute_answer(request, fits_on=True).answer
    return replace(answer, link=link(BASE, request))


def report_answer(case: str) -> Answer:
    """``plain_answer`` with launch configs."""
    return replace(plain_answer(case), launch=_launch(case))
