"""Training compute, time and cost.

FLOPs per token: 6N for the weights (Kaplan et al. 2020; forward 2N, backward 4N) plus the
attention term 12 x layers x (heads x head_dim) x seq (PaLM, Chowdhery et al. 2022, app. B);
for MoE, N is the active parameter count. Full recompute re-runs the forward: the hardware
does 8N instead of 6N, so at the same hardware utilisation the job takes 4/3 as long.
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
                             include_attention: bool = True) -> float:
    """6N (+ attention term)."""
    flops = 6 * params_active
    if include_attention and arch is not None:
        flops += attention_flops_per_token(arch, seq_len)
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
    full_recompute: bool = False,
    price_per_gpu_hour: float | None = None,
    include_attention: bool = True,
) -> ComputeEstimate:
    """C = flops_per_token x D; T = C / (gpus x peak x MFU) (x 4/3 with full recompute)."""
    per_token = training_flops_per_token(params_active, arch, seq_len, include_attention)
    total = per_token * tokens
    seconds = total / (gpus * peak_flops * mfu)
    if full_recompute:
        seconds *= 4 / 3
    gpu_hours = seconds * gpus / 3600
    cost = gpu_hours * price_per_gpu_hour if price_per_gpu_hour is not None else None
    formula = "C = (6N + 12*L*d_attn*s) x D" if include_attention and arch else "C = 6*N*D"
    formula += "; T = C / (GPUs x peak x MFU)" + (" x 4/3 (full recompute)" if full_recompute
                                                  else "")
    return ComputeEstimate(per_token, total, seconds, gpu_hours, cost,
                           CHINCHILLA_TOKENS_PER_PARAM * params_active, formula)
