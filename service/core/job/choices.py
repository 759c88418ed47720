"""The words a request accepts for each choice field, and what each optimizer name means.

Optimizer names: our ids plus the Hugging Face ``TrainingArguments.optim`` names people paste
(transformers ``training_args.OptimizerNames``). Each maps to a family (what state it keeps per
parameter) and an implementation (what temporaries its step allocates):
- ``fused``: one kernel over all parameters, no per-step copies (``torch.optim.AdamW(fused=True)``,
  DeepSpeed ``FusedAdam``, Apex/Transformer Engine fused Adam);
- ``foreach``: ``torch.optim.AdamW``'s multi-tensor path, PyTorch's default on CUDA
  (``torch/optim/optimizer.py`` ``_default_to_fused_or_foreach``), which allocates
  intermediate tensor lists during ``step()``;
- ``bnb``: bitsandbytes blockwise 8-bit state; ``paged``: the same in CUDA unified memory that
  pages to the CPU under pressure.
"""

from __future__ import annotations

from dataclasses import dataclass

from service.core.errors import InvalidInput

TASKS: tuple[str, ...] = ("train", "finetune", "infer")
FINETUNE_METHODS: tuple[str, ...] = ("full", "lora", "qlora")
RECOMPUTE: tuple[str, ...] = ("none", "selective", "full")
OFFLOADS: tuple[str, ...] = ("none", "optimizer", "optimizer_and_params")
PIPELINE_SCHEDULES: tuple[str, ...] = ("1f1b", "interleaved")
ACTIVATION_MODELS: tuple[str, ...] = ("hf", "hf_cpu", "megatron", "korthikanti", "seed_s3")
OVERHEAD_MODELS: tuple[str, ...] = ("measured", "flat_10pct")
LORA_TARGETS: tuple[str, ...] = ("attention", "all_linear")
PRECISIONS: tuple[str, ...] = ("fp32", "bf16_mixed", "fp16_mixed", "bf16", "fp16", "fp8")
TRAINING_FRAMEWORKS: tuple[str, ...] = ("deepspeed", "megatron", "fsdp", "hf")
SERVING_FRAMEWORKS: tuple[str, ...] = ("vllm", "sglang", "hf", "llamacpp")


def llamacpp_serves(framework: str | None, quantization: str | None) -> bool:
    """llama.cpp (ollama) serves the job: named, or a GGUF file with no engine named."""
    return framework == "llamacpp" or (framework is None
                                       and (quantization or "").startswith("gguf"))
FRAMEWORKS: tuple[str, ...] = (*TRAINING_FRAMEWORKS, "vllm", "sglang", "llamacpp")
PLANNER_METHODS: tuple[str, ...] = ("planner", "seed_even_split")
# training objectives (job/objective.py): preference ones pair completions and/or score them
# against a frozen reference model
OBJECTIVES: tuple[str, ...] = ("sft", "dpo", "ipo", "kto", "orpo", "simpo", "cpo")
WITH_REFERENCE = frozenset({"dpo", "ipo", "kto"})
PAIRED = frozenset({"dpo", "ipo", "orpo", "simpo", "cpo"})


def sequences_per_sample(objective: str) -> int:
    """Sequences one training sample puts through the model: chosen and rejected, or one."""
    return 2 if objective in PAIRED else 1
# The dtype a precision computes and keeps 16-bit weights in; on a serving job ``precision``
# names the weights' dtype.
PRECISION_DTYPE = {"fp32": "fp32", "bf16_mixed": "bf16", "bf16": "bf16", "fp16_mixed": "fp16",
                      "fp16": "fp16", "fp8": "fp8"}


@dataclass(frozen=True, slots=True)
class OptimizerName:
    """What one accepted optimizer name stands for."""

    family: str  # adamw, adamw_8bit, sgd, sgd_momentum, adafactor, lion, lion_8bit
    implementation: str  # default (the framework's own), fused, foreach, bnb, paged

    @property
    def bitsandbytes(self) -> bool:
        """A bitsandbytes optimizer (8-bit or paged): it steps whole tensors."""
        return self.implementation in ("bnb", "paged")


OPTIMIZER_NAMES: dict[str, OptimizerName] = {
    "adamw": OptimizerName("adamw", "default"),
    "adamw_torch": OptimizerName("adamw", "foreach"),
    "adamw_torch_fused": OptimizerName("adamw", "fused"),
    "adamw_apex_fused": OptimizerName("adamw", "fused"),
    "adamw_8bit": OptimizerName("adamw_8bit", "bnb"),
    "adamw_bnb_8bit": OptimizerName("adamw_8bit", "bnb"),
    "paged_adamw_8bit": OptimizerName("adamw_8bit", "paged"),
    "paged_adamw": OptimizerName("adamw", "paged"),
    "paged_adamw_32bit": OptimizerName("adamw", "paged"),
    "sgd": OptimizerName("sgd", "default"),
    "sgd_momentum": OptimizerName("sgd_momentum", "default"),
    "adafactor": OptimizerName("adafactor", "default"),
    "lion": OptimizerName("lion", "default"),
    "lion_32bit": OptimizerName("lion", "bnb"),
    "lion_8bit": OptimizerName("lion_8bit", "bnb"),
    "paged_lion_8bit": OptimizerName("lion_8bit", "paged"),
}
OPTIMIZERS: tuple[str, ...] = tuple(OPTIMIZER_NAMES)


def choice(name: str, value: str, accepted: tuple[str, ...]) -> str:
    """``value`` when it is one of ``accepted``; else InvalidInput naming the field."""
    if value not in accepted:
        raise InvalidInput(name, f"unknown value {value!r}", ", ".join(accepted))
    return value


def optimizer_name(name: str) -> OptimizerName:
    found = OPTIMIZER_NAMES.get(name)
    if found is None:
        raise InvalidInput("optimizer", f"unknown optimizer {name!r}", ", ".join(OPTIMIZERS))
    return found


def check_recipe(precision: str, optimizer: str, framework: str, model_parallel: bool = False
                 ) -> None:
    """``model_parallel``: the request states tensor, pipeline or context parallelism."""
    choice("precision", precision, PRECISIONS)
    name = optimizer_name(optimizer)
    if framework not in TRAINING_FRAMEWORKS:
        raise InvalidInput("framework", f"{framework!r} does not train",
                           "for training: " + ", ".join(TRAINING_FRAMEWORKS))
    if model_parallel and name.bitsandbytes:
        # bitsandbytes steps whole tensors: not FSDP2/accelerate DTensor shards (bitsandbytes
        # #1633), and Megatron-LM and torchtitan build their own 32-bit Adam
        raise InvalidInput("optimizer", f"{optimizer} (bitsandbytes) with tensor, pipeline or "
                           "context parallelism is not a combination any stack fitcheck plans "
                           "for runs (DeepSpeed ZeRO, FSDP2, Megatron-LM, torchtitan)",
                           "adamw with tp/pp/cp, or the bitsandbytes optimizer with data "
                           "parallelism and ZeRO (DeepSpeed) alone")


def serving_framework(framework: str) -> str:
    if framework not in SERVING_FRAMEWORKS:
        raise InvalidInput("framework", f"{framework!r} does not serve",
                           "for serving: " + ", ".join(SERVING_FRAMEWORKS))
    return framework


def weight_format_of_precision(precision: str) -> str:
    """The weights' storage format when a serving job states a precision."""
    return PRECISION_DTYPE[choice("precision", precision, PRECISIONS)]
