"""Training compute, time and cost.

FLOPs per token: 6N for the weights (Kaplan et al. 2020; forward 2N, backward 4N: 2N for the
gradients of the activations, 2N for those of the weights) plus the attention term 12 x layers
x (heads x head_dim) x seq (PaLM, Chowdhery et al. 2022, app. B); for MoE, N is the active
parameter count. Adapters (LoRA, QLoRA) freeze the base: the backward still passes the
activations' gradients through every layer (2N) but computes weight gradients for the adapters
alone, 4N + 2 N_trainable (PyTorch autograd skips the weight-gradient matmul of a tensor with
requires_grad=False). Full recompute re-runs the forward (2N + 4 x layers x d_attn x seq, the
attention term's forward third): the hardware does 8N instead of 6N, which the model FLOPs
utilisation (MFU) a run reaches reflects (``time_cost.default_mfu``).
Time T = C / (GPUs x peak FLOP/s x MFU). Compute-optimal tokens ~ 20 x N (Hoffmann et al. 2022).
"""

from __future__ import annotations

from dataclasses import dataclass

from service.core.model.architecture import Architecture

SECONDS_PER_DAY = 86_400
CHINCHILLA_TOKENS_PER_PARAM = 20


@dataclass(frozen=True, slots=True)
class ComputeEstimate:
    flops_per_token: float
    total_flops: float
    seconds: float
    gpu_hours: float
    cost: float | None
    compute_optimal_tokens: float
    formula: str

    @property
    def days(self) -> float:
        return self.seconds / SECONDS_PER_DAY


def attention_flops_per_token(arch: Architecture, seq_len: int) -> float:
    """12 x L x (heads x head_dim) x seq: QK^T and AV, forward and backward (PaLM app. B)."""
    width = arch.q_width if arch.mla is None else arch.heads * (
        arch.mla.qk_nope_head_dim + arch.mla.qk_rope_head_dim)
    return 12 * arch.layers * width * seq_len


def training_flops_per_token(params_active: float, arch: Architecture | None, seq_len: int,
                             include_attention: bool = True,
                             trainable: float | None = None) -> float:
    """4N + 2 N_trainable (6N when every weight trains) (+ attention term)."""
    flops = 4 * params_active + 2 * (params_active if trainable is None else trainable)
    if include_attention and arch is not None:
        flops += attention_flops_per_token(arch, seq_len)
    return flops


def recompute_flops_per_token(params_active: float, arch: Architecture | None, seq_len: int,
                              include_attention: bool = True) -> float:
    """What full recompute runs again per token: the forward, 2N (+ the attention forward)."""
    flops = 2 * params_active
    if include_attention and arch is not None:
        flops += attention_flops_per_token(arch, seq_len) / 3
    return flops


def training_time(
    *,
    params_active: float,
    tokens: float,
    gpus: int,
    peak_flops: float,
    mfu: float,
    arch: Architecture | None = None,
    seq_len: int = 4096,
    price_per_gpu_hour: float | None = None,
    include_attention: bool = True,
    trainable: float | None = None,
) -> ComputeEstimate:
    """C = flops_per_token x D; T = C / (gpus x peak x MFU), MFU in model FLOPs (recompute's
    cost is in the MFU a run reaches: ``time_cost.default_mfu``). ``trainable``: the
    parameters that get weight gradients, when not all of them (adapters)."""
    per_token = training_flops_per_token(params_active, arch, seq_len, include_attention,
                                         trainable)
    total = per_token * tokens
    seconds = total / (gpus * peak_flops * mfu)
    gpu_hours = seconds * gpus / 3600
    cost = gpu_hours * price_per_gpu_hour if price_per_gpu_hour is not None else None
    weights = "6N" if trainable is None else "4N + 2*N_trainable"
    if include_attention and arch:
        formula = f"C = ({weights} + 12*L*d_attn*s) x D"
    elif trainable is None:
        formula = "C = 6*N*D"  # the textbook line
    else:
        formula = f"C = ({weights}) x D"
    if trainable is not None:
        formula += " (frozen base: weight gradients for the adapters only)"
    formula += "; T = C / (GPUs x peak x MFU)"
    return ComputeEstimate(per_token, total, seconds, gpu_hours, cost,
                           CHINCHILLA_TOKENS_PER_PARAM * params_active, formula)
