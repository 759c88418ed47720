"""Training time and cost of a resolved job on its GPUs, with what was assumed."""

from __future__ import annotations

from dataclasses import dataclass

from service.core.compute.training_time import (
    ComputeEstimate,
    recompute_flops_per_token,
    training_flops_per_token,
    training_time,
)
from service.core.hardware.gpus import Gpu, find_gpu, peak_flops
from service.core.job.assumptions import Assumption, default, derived, stated
from service.core.job.resolve import ResolvedJob
from service.core.job.spec import Job
from service.core.model.adapter_params import lora_params
from service.core.model.params import active_parameter_count

DEFAULT_TIME_GPU = "h100-80gb"
# End-to-end FP8 training speedup over bf16 on the same GPUs: torchao's float8 recipes measured
# "up to 1.5x" on 512-GPU clusters and 1.34-1.43x on 2K H200 (docs.pytorch.org/ao, "Pre-training
# with float8"); only the linear layers' GEMMs run in FP8 (attention, norms and communication
# do not), so twice the tensor peak is not twice the speed. The midpoint of those figures.
FP8_TRAINING_SPEEDUP = 1.4
FP8_SOURCE = ("torchao float8 pre-training: up to 1.5x on 512 GPUs, 1.34-1.43x on 2K H200 "
              "(docs.pytorch.org/ao pretraining)")
# QLoRA's 4-bit base is dequantized (bitsandbytes) in every forward and backward matmul: the
# median of 7 QLoRA runs against the LoRA run of the same model nearest in tokens per
# micro-batch, all with checkpointing, in model TFLOP/s on one H100 (0.62-0.86)
QLORA_THROUGHPUT = 0.78
QLORA_SOURCE = "shared/measurements/h100-80gb runs t15, t16, g082-g086 against LoRA runs"


@dataclass(frozen=True, slots=True)
class TimeAndCost:
    """Time and cost with the attention term and recompute, the textbook 6ND beside it, and
    the assumptions both rest on."""

    full: ComputeEstimate
    textbook: ComputeEstimate
    assumptions: tuple[Assumption, ...]
    mfu_assumed: bool = False  # the MFU is the default: the time is a range (``MFU_SPREAD``)


# A default MFU is a middle value: public pretraining runs reached from about 30% to 50% of the
# bf16 peak in model FLOPs (Llama 3 405B 38-43%, Llama 3 paper table 4; MPT-7B about 40%, its
# 9.5 days on 440 A100s; StarCoder about 32%, 320,256 A100-hours for 1T tokens; Llama 2 70B
# about 46%, 1.72M A100-hours for 2T tokens), so a time on the default is given with the days
# at the default x (1 - 0.25) and x (1 + 0.25)
MFU_SPREAD = 0.25


def time_and_cost(resolved: ResolvedJob, job: Job) -> TimeAndCost | None:
    """None without ``tokens``. ``job``: the layout that runs (its GPU count and recompute)."""
    if resolved.tokens is None:
        return None
    notes: list[Assumption] = [stated("tokens", resolved.tokens)]
    gpu = job.gpu
    if gpu is None:
        gpu = find_gpu(DEFAULT_TIME_GPU)
        notes.append(default("gpu", gpu.id, "time on a common training GPU (no GPU given)"))
    peak_precision = {"fp8": "fp8", "fp32": "tf32"}.get(job.precision, "bf16")
    active = active_parameter_count(job.arch) * job.param_scale
    # adapters: only they get weight gradients (the textbook 6ND beside it stays 6ND)
    trainable = None if job.trains_all_weights else float(
        lora_params(job.arch, job.lora_rank, job.lora_targets))
    mfu = resolved.mfu
    if mfu is None:
        mfu, note = default_mfu(gpu, peak_precision, job, active, trainable)
        notes.append(note)
    else:
        notes.append(stated("mfu", mfu))
        mfu = _stated_fp8_mfu(gpu, peak_precision, mfu, notes)
    price = resolved.price_per_gpu_hour
    if price is None:
        price = gpu.price_per_gpu_hour_usd
        if price is not None:
            notes.append(default("price_per_gpu_hour", price, "catalog on-demand price",
                                 gpu.price_note))
    else:
        notes.append(stated("price_per_gpu_hour", price))
    peak = peak_flops(gpu, peak_precision)

    def run(textbook: bool) -> ComputeEstimate:
        return training_time(params_active=active, tokens=resolved.tokens or 0.0,
                             gpus=job.parallel.gpus, peak_flops=peak, mfu=mfu, arch=job.arch,
                             seq_len=job.seq_len, price_per_gpu_hour=price,
                             include_attention=not textbook,
                             trainable=None if textbook else trainable)

    return TimeAndCost(run(textbook=False), run(textbook=True), tuple(notes),
                       resolved.mfu is None)


def _stated_fp8_mfu(gpu: Gpu, peak_precision: str, mfu: float, notes: list[Assumption]) -> float:
    """A stated MFU is read against the bf16 dense peak, as Megatron-LM, torchtitan and NeMo
    report it; an FP8 run gains FP8_TRAINING_SPEEDUP over it, not the FP8 peak's 2x. As a share
    of the FP8 peak the time is computed against: mfu x speedup / (FP8 peak / bf16 peak)."""
    fp8_gain = peak_flops(gpu, "fp8") / peak_flops(gpu, "bf16")
    if peak_precision != "fp8" or fp8_gain <= 1:
        return mfu
    speedup = min(FP8_TRAINING_SPEEDUP, fp8_gain)
    share = round(mfu * speedup / fp8_gain, 3)
    notes.append(derived("plan.fp8_mfu", share,
                         f"MFU {mfu:.0%} read against the bf16 peak; FP8 GEMMs run x{speedup:g} "
                         f"faster, not x{fp8_gain:.3g} (the FP8 peak): {share:.1%} of the FP8 peak",
                         FP8_SOURCE))
    return share


def default_mfu(gpu: Gpu, peak_precision: str, job: Job, active: float,
                trainable: float | None) -> tuple[float, Assumption]:
    """The GPU's typical utilisation (the catalog's, for runs without recompute), as model FLOPs
    utilisation of this job. MFU counts the model's FLOPs only (PaLM, Chowdhery et al. 2022,
    app. B: rematerialisation is excluded), so full recompute, which runs the forward again on
    the same hardware, leaves model FLOPs / (model + recomputed FLOPs) of it; FP8 GEMMs measure
    against twice the peak and gain FP8_TRAINING_SPEEDUP."""
    mfu, why, source = gpu.default_mfu, f"typical for the {gpu.name}", gpu.mfu_note
    fp8_gain = peak_flops(gpu, "fp8") / peak_flops(gpu, "bf16")
    if peak_precision == "fp8" and fp8_gain > 1:
        mfu *= min(FP8_TRAINING_SPEEDUP, fp8_gain) / fp8_gain
        why = (f"of the FP8 peak: {gpu.default_mfu:.0%} typical for the {gpu.name} in bf16, "
               f"x {FP8_TRAINING_SPEEDUP:g} FP8 speedup / {fp8_gain:.3g}x FP8 peak")
        source += f"; {FP8_SOURCE}"
    if job.finetune_method == "qlora":
        mfu *= QLORA_THROUGHPUT
        why += (f"; x {QLORA_THROUGHPUT:g} for QLoRA: the 4-bit base is dequantized in every "
                "matmul, so it runs slower than bf16 LoRA")
        source += f"; {QLORA_SOURCE}"
    if job.recompute == "full":
        model = training_flops_per_token(active, job.arch, job.seq_len, True, trainable)
        share = model / (model + recompute_flops_per_token(active, job.arch, job.seq_len))
        mfu *= share
        why += (f"; x {share:.2f} with full recompute: the forward runs again (2N + the "
                f"attention's forward per token), which model FLOPs do not count")
        source += "; MFU excludes recomputation: Chowdhery et al. 2022 (PaLM) app. B"
    mfu = round(mfu, 3)
    return mfu, default("mfu", mfu, why, source)


def gpu_hours_on(gpu: Gpu, total_flops: float) -> float | None:
    """The same run's GPU-hours on another GPU type, at its bf16 dense peak and the catalog's
    default MFU (what "cheaper option?" weighs for a run of stated tokens); None without a peak."""
    rate = peak_flops(gpu, "bf16") * gpu.default_mfu
    return total_flops / rate / 3600 if rate > 0 else None
