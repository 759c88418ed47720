"""The Hugging Face ``TrainingArguments`` that go with a plan, as command-line flags of a script
that parses them with ``HfArgumentParser`` (field names of transformers 5.24
``training_args.py``; ``activation_checkpointing`` is 5.x's name for gradient_checkpointing)."""

from __future__ import annotations

from service.core.job.spec import Job
from service.core.launch.launch_shape import LaunchShape
from service.core.planning.plan_types import Layout

# fitcheck's optimizer ids that are not TrainingArguments.optim values, and the optim value
# that runs the same algorithm (transformers OptimizerNames)
HF_OPTIM = {"adamw": "adamw_torch_fused", "adamw_apex_fused": "adamw_torch_fused",
            "paged_adamw": "paged_adamw_32bit", "sgd_momentum": "sgd", "lion": "lion_32bit"}


def hf_optim(optimizer: str) -> str:
    return HF_OPTIM.get(optimizer, optimizer)


def training_arguments(job: Job, layout: Layout, shape: LaunchShape, *, deepspeed_file: str = "",
                       model_recompute: bool = True) -> dict[str, str | int | float | bool]:
    """The fields this plan decides; ``model_recompute``: recompute through the Trainer (FSDP's
    own activation checkpointing replaces it)."""
    args: dict[str, str | int | float | bool] = {
        "per_device_train_batch_size": shape.micro_batch,
        "gradient_accumulation_steps": shape.accumulation,
    }
    if shape.precision in ("bf16", "fp8"):
        args["bf16"] = True
    elif shape.precision == "fp16":
        args["fp16"] = True
    if layout.recompute == "full" and model_recompute:
        args["activation_checkpointing"] = True
    if job.offload == "none" or not deepspeed_file:
        args["optim"] = hf_optim(job.optimizer)
    if job.chunked_loss:
        args["use_liger_kernel"] = True
    if deepspeed_file:
        args["deepspeed"] = deepspeed_file
    return args


def version_notes(args: dict[str, str | int | float | bool]) -> tuple[str, ...]:
    """What an older transformers needs instead: ``activation_checkpointing`` arrived in 5.23,
    where ``gradient_checkpointing`` became its deprecated alias."""
    if args.get("activation_checkpointing"):
        return ("--activation_checkpointing is transformers >= 5.23's name; before 5.23 pass "
                "--gradient_checkpointing",)
    return ()


def as_flags(args: dict[str, str | int | float | bool]) -> list[str]:
    """``--name value`` per field; a true boolean is the bare flag."""
    words: list[str] = []
    for name, value in args.items():
        words.append(f"--{name}")
        if value is not True:
            words.append(str(value))
    return words
