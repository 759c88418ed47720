"""How a training job holds its weights and runs its compute, which decides what its layers
keep for backward (``saved_tensors.py``) and which weight copies are live.

- 16-bit modules (DeepSpeed, Megatron-LM, FSDP, pure bf16): parameters and compute in 16-bit;
- autocast: fp32 parameters under ``torch.autocast`` (Hugging Face Trainer or accelerate with
  ``bf16=True``/``fp16=True`` and plain data parallelism; with ZeRO or FSDP under the Trainer,
  DeepSpeed or FSDP's mixed precision runs the modules in 16-bit instead): fp32 residual
  stream, and a 16-bit copy of every weight cached while autocast is on;
- adapters (LoRA): a frozen 16-bit base, fp32 adapters under autocast (peft
  ``autocast_adapter_dtype``);
- adapters on a 4-bit base (QLoRA): peft ``prepare_model_for_kbit_training`` casts every
  parameter that is not 4-bit (embeddings, LM head, norms) to fp32, so the residual stream is
  fp32, and bitsandbytes ``Linear4bit`` returns its input's dtype, so MLP intermediates are too;
  sharded by FSDP / ZeRO-3 (FSDP-QLoRA), the base is stored in bf16 and runs as 16-bit LoRA.
"""

from __future__ import annotations

from dataclasses import dataclass

from service.core.job.spec import Job
from service.core.job.training_stack import trainer_backend
from service.core.memory.precision import compute_dtype_bytes, is_mixed


@dataclass(frozen=True, slots=True)
class Regime:
    autocast: bool
    adapters: bool
    nf4_base: bool
    residual_bytes: int
    mlp_bytes: int


def regime_of(job: Job) -> Regime:
    e = compute_dtype_bytes(job.precision)
    fsdp_qlora = job.parallel.zero_stage >= 3 and job.parallel.zero_shards > 1
    if job.finetune_method == "qlora" and fsdp_qlora:
        # FSDP-QLoRA keeps the non-quantized parameters in bf16 (the storage dtype): no fp32
        # residual stream, no fp32 LM head to cast; otherwise as 16-bit LoRA
        return Regime(autocast=True, adapters=True, nf4_base=False, residual_bytes=e,
                      mlp_bytes=e)
    if job.finetune_method == "qlora":
        return Regime(autocast=True, adapters=True, nf4_base=True, residual_bytes=4, mlp_bytes=4)
    if job.finetune_method == "lora" and job.task == "finetune":
        return Regime(autocast=True, adapters=True, nf4_base=False, residual_bytes=e,
                      mlp_bytes=e)
    autocast = job.framework == "hf" and is_mixed(job.precision) and job.precision != "fp8" \
        and job.parallel.zero_stage == 0
    return Regime(autocast=autocast, adapters=False, nf4_base=False,
                  residual_bytes=4 if autocast else e, mlp_bytes=e)


def states_framework(job: Job) -> str:
    """The framework whose rules hold the weights, gradients and optimizer state: the Trainer's
    backend for a full-weight Trainer job (``trainer_backend``: the one its launch config
    names), else the job's own framework."""
    return framework_of_states(job.framework, job.parallel.zero_stage, job.offload,
                               job.trains_all_weights and job.is_training)


def framework_of_states(framework: str, zero_stage: int, offload: str, full_training: bool) -> str:
    """``states_framework`` from a layout's parts (the planner's tables key layouts by them)."""
    if framework == "hf" and full_training:
        return trainer_backend(zero_stage, offload)
    return framework
