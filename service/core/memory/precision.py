"""Bytes per parameter for weights, gradients and optimizer state, by recipe.

Sources: ZeRO (Rajbhandari et al. 2019, section 3: mixed-precision Adam = 2+2+12 = 16 B/param);
EleutherAI "Transformer Math 101"; Megatron-LM ``distributed/param_and_grad_buffer.py`` (fp32
main grads, 18 B/param); bitsandbytes 8-bit optimizers (Dettmers et al. 2021, block size 2048);
Adafactor (Shazeer & Stern 2018); Lion (Chen et al. 2023).
"""

from __future__ import annotations

from service.core.job.choices import optimizer_name

FP32_PARAM_FRAMEWORKS = ("hf", "fsdp")
# bitsandbytes 8-bit optimizer states: one fp32 absmax per 256-value block (the block size of
# its blockwise optimizer kernels; the H100 run g067 reproduces it to 0.01 GB)
BNB_BLOCK = 256


def is_mixed(precision: str) -> bool:
    """Mixed recipes compute in 16/8-bit and keep an fp32 master copy of the weights."""
    return precision in ("bf16_mixed", "fp16_mixed", "fp8")


def compute_dtype_bytes(precision: str) -> int:
    """Bytes of one activation element: 4 in fp32, else 2 (fp8 recipes keep bf16 activations)."""
    return 4 if precision == "fp32" else 2


def weight_bytes_per_param(precision: str, framework: str) -> float:
    """Working weights: fp32 4 B; 16-bit 2 B; fp8 keeps bf16 weights plus an fp8 copy (2+1 B).

    ``hf`` (PyTorch autocast over fp32 parameters: HF Trainer/accelerate without DeepSpeed)
    and ``fsdp`` (FSDP2 ``MixedPrecisionPolicy``: sharded fp32 parameters, all-gathered in
    bf16 only for compute) keep the weights in fp32 (4 B): they are the master copy.
    """
    if precision == "fp32" or (framework in FP32_PARAM_FRAMEWORKS and is_mixed(precision)):
        return 4
    if precision == "fp8":
        return 3  # Transformer Engine caches an fp8 transpose/copy of each weight
    return 2


def gradient_bytes_per_param(precision: str, framework: str) -> float:
    """Gradients: in the weights' dtype, except fp32 where the recipe accumulates in fp32.

    Megatron keeps fp32 main grads (``accumulate_allreduce_grads_in_fp32``): 4 B.
    fp32 parameters (``hf`` autocast, ``fsdp``) get fp32 gradients: 4 B.
    """
    fp32_grads = ("megatron", *FP32_PARAM_FRAMEWORKS)
    if precision == "fp32" or (framework in fp32_grads and is_mixed(precision)):
        return 4
    return 2


def master_bytes_per_param(precision: str, framework: str) -> float:
    """fp32 master weights kept by the optimizer in mixed precision (4 B), else none.

    Where the parameters themselves are fp32 (``hf``, ``fsdp``) the optimizer updates them
    directly: no extra copy.
    """
    if is_mixed(precision) and framework not in FP32_PARAM_FRAMEWORKS:
        return 4
    return 0


def optimizer_state_bytes_per_param(optimizer: str, precision: str) -> float:
    """Optimizer moments per parameter, master copy excluded.

    AdamW: m and v (2 x 4 B fp32; 2 x 2 B when the whole model is pure bf16, as
    ``torch.optim.AdamW`` keeps states in the parameter dtype). 8-bit Adam: 2 x 1 B plus one
    fp32 absmax per 256 values per state. SGD with momentum: one buffer; Lion: one moment.
    Adafactor's factored moment is shape-dependent: see ``adafactor_state_bytes``.
    """
    state_dtype = 2 if precision in ("bf16", "fp16") else 4
    optimizer = optimizer_name(optimizer).family
    if optimizer == "adamw":
        return 2 * state_dtype
    if optimizer == "adamw_8bit":
        return 2 * (1 + 4 / BNB_BLOCK)
    if optimizer in ("sgd_momentum", "lion"):
        return state_dtype
    if optimizer == "lion_8bit":
        return 1 + 4 / BNB_BLOCK
    if optimizer == "sgd":
        return 0
    return 0  # adafactor: counted from matrix shapes, not per parameter
