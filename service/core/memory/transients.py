"""Tensors that live only for part of a training step: the loss's logits buffers, one layer's
backward, autocast's weight copies, ZeRO-3's gathered layers, gradient buckets, the optimizer
step's temporaries. ``training_phases.py`` says which are live at once.

Checked against peak memory measured on an H100 (``bench/gpu_accuracy.py``); sources:
transformers ``loss/loss_utils.py`` ``ForCausalLMLoss`` (``logits.float()`` then
``cross_entropy``), PyTorch ``autocast_mode.cpp`` ``cached_cast``, ``torch/optim/adam.py``
``_multi_tensor_adam``, bitsandbytes ``backends/cuda/ops.py`` ``_dequant_linear_fallback``.
"""

from __future__ import annotations

import math
from functools import lru_cache

from service.core.job.choices import optimizer_name
from service.core.job.spec import Job
from service.core.memory.formula import Component, component
from service.core.memory.lora import NF4_BITS_PER_WEIGHT, bnb_4bit_params
from service.core.memory.model_state import trainable_rank_params
from service.core.memory.precision import (
    compute_dtype_bytes,
    gradient_bytes_per_param,
    weight_bytes_per_param,
)
from service.core.memory.regime import Regime, states_framework
from service.core.model.adapter_params import lora_params
from service.core.model.architecture import Architecture
from service.core.model.linears import attention_linear_shapes, mlp_linear_shapes
from service.core.model.params import layer_params, parameter_breakdown

DDP_BUCKET_BYTES = 2 * 25 * 2**20  # DDP gradient buckets (bucket_cap_mb=25, two in flight)
# DeepSpeed ZeRO-1/2 with contiguous_gradients (forced on by CPU offload) allocates an ipg
# buffer of reduce_bucket_size elements in backward(), a second with overlap_comm
# (runtime/zero/stage_1_and_2.py); 5e8 is zero/config.py's default, and the DeepSpeed config
# fitcheck writes states it
DEEPSPEED_REDUCE_BUCKET = 500_000_000
LOSS_SOURCE = "transformers loss_utils.ForCausalLMLoss: logits.float(), cross_entropy"


def _tokens(job: Job) -> float:
    return job.tokens_per_micro_batch / job.parallel.cp


def loss_chunk_tokens(job: Job) -> float:
    """Tokens whose logits exist at once: all of them, or with a fused linear-cross-entropy
    kernel one chunk of next_pow2(ceil(tokens / ceil(vocab / hidden))) (Liger Kernel
    ``fused_linear_cross_entropy``)."""
    tokens = _tokens(job)
    if not job.chunked_loss:
        return tokens
    arch = job.arch
    chunk = -(-tokens // -(-arch.vocab // arch.hidden))
    return min(tokens, 1 << max(0, math.ceil(math.log2(max(1.0, chunk)))))


def logits_share(job: Job) -> float:
    """vocab x tokens of this GPU's logits at once (vocab-parallel LM heads split V by TP)."""
    return job.arch.vocab * loss_chunk_tokens(job) / job.parallel.tp


def loss_forward(job: Job) -> Component:
    """At the end of the forward, beside the kept fp32 log-softmax: the 16-bit logits the
    model returns and their fp32 copy (none when computing in fp32)."""
    e = compute_dtype_bytes(job.precision)
    copy = 4 if e < 4 else 0
    return component("temporary", "(logit_bytes + fp32_copy) * vocab_tokens", LOSS_SOURCE,
                     "the logits and their fp32 copy", logit_bytes=e, fp32_copy=copy,
                     vocab_tokens=logits_share(job))


def loss_backward(job: Job) -> Component:
    """At the start of the backward (LogSoftmaxBackward), beside the kept log-softmax: the
    fp32 gradient of the loss over the log-softmax and its own gradient (a fused kernel has
    computed its gradients in the forward)."""
    return component("temporary", "grad_buffers * 4 * vocab_tokens", LOSS_SOURCE,
                     "fp32 gradients of the log-softmax", grad_buffers=0 if job.chunked_loss
                     else 2, vocab_tokens=logits_share(job))


def largest_transient(job: Job) -> float:
    """The biggest block a step allocates and frees: the fp32 logits (4 x V x tokens)."""
    return 4 * logits_share(job)


def autocast_cache(job: Job, regime: Regime) -> Component:
    """The 16-bit copies autocast caches of every trainable fp32 weight used by a matmul (the
    layers' linears and the LM head, or the adapters), held until autocast exits."""
    cast: float
    if regime.adapters:
        cast = lora_params(job.arch, job.lora_rank, job.lora_targets)
    elif regime.autocast:
        cast = _layer_linear_params(job) + job.arch.vocab * job.arch.hidden
    else:
        cast = 0
    return component("weights", "cast_params * 2", "PyTorch autocast_mode.cpp cached_cast",
                     "16-bit copies autocast caches", cast_params=cast)


def saved_weight_copies(job: Job, regime: Regime, cache: Component) -> Component:
    """The 16-bit weight copies autograd still holds at the start of the backward: all of
    autocast's (no recompute), or only the LM head's, whose matmul runs outside the
    checkpoints; QLoRA's frozen fp32 LM head is cast on every call and its copy kept.
    ``cache``: the job's ``autocast_cache`` (held in its step states)."""
    head = job.arch.vocab * job.arch.hidden
    cast: float
    if regime.nf4_base:
        cast = head + (0 if job.recompute == "full" else cache.term_map["cast_params"])
    elif regime.autocast and not regime.adapters:
        cast = head if job.recompute == "full" else cache.term_map["cast_params"]
    else:
        cast = 0
    return component("weights", "cast_params * 2", "PyTorch autocast_mode.cpp cached_cast",
                     "16-bit weight copies kept for the backward", cast_params=cast)


def _layer_linear_params(job: Job) -> float:
    return _linear_params(job.arch)


@lru_cache(maxsize=1024)
def _linear_params(arch: Architecture) -> int:
    per_layer = sum(i * o for i, o in attention_linear_shapes(arch))
    per_layer += sum(i * o for i, o in mlp_linear_shapes(arch, arch.ffn))
    return arch.layers * per_layer


def layer_grad_buffers(job: Job, regime: Regime) -> Component:
    """One layer's backward: the residual gradient and two MLP-wide gradients per token, and
    QLoRA's 16-bit dequantized weight of the matmul it runs."""
    arch, par = job.arch, job.parallel
    widest_mlp = max(o for _, o in mlp_linear_shapes(arch, _ffn(job)))
    dequant = 0
    if regime.nf4_base:
        shapes = attention_linear_shapes(arch) + mlp_linear_shapes(arch, _ffn(job))
        dequant = 2 * max(i * o for i, o in shapes) // par.tp
    return component(
        "temporary", "tokens * (2 * residual_bytes * hidden + 2 * mlp_bytes * widest_mlp / tp)"
        " + dequantized", "PyTorch autograd; bitsandbytes _dequant_linear_fallback",
        "one layer's backward", tokens=_tokens(job), residual_bytes=regime.residual_bytes,
        hidden=arch.hidden, mlp_bytes=regime.mlp_bytes, widest_mlp=widest_mlp, tp=par.tp,
        dequantized=dequant)


def _ffn(job: Job) -> int:
    arch = job.arch
    if arch.moe is None:
        return arch.ffn
    return max(arch.ffn, arch.moe.experts_per_token * arch.moe.expert_ffn)


def layer_weight_copies(job: Job, regime: Regime) -> Component:
    """Under autocast, the layer being recomputed or differentiated holds its weights' 16-bit
    copies."""
    per_layer = _layer_linear_params(job) / job.arch.layers if regime.autocast \
        and not regime.adapters else 0
    return component("weights", "layer_params * 2", "PyTorch autocast_mode.cpp cached_cast",
                     "one layer's 16-bit weight copies", layer_params=per_layer)


def gathered_layers(job: Job) -> Component:
    """ZeRO-3 / FSDP: the all-gathered layer being computed, the prefetched next one, and one
    layer's unsharded gradients before reduce-scatter (FSDP ``limit_all_gathers``)."""
    par = job.parallel
    sharded = par.zero_stage >= 3 and par.zero_shards > 1
    per_layer = layer_params(job.arch) / job.arch.layers / par.tp if sharded else 0
    grad = gradient_bytes_per_param(job.precision, states_framework(job)) if job.trains_all_weights else 0
    if job.finetune_method == "qlora":
        # FSDP-QLoRA gathers the layer as stored (bnb_4bit_quant_storage=bf16): its NF4 linears,
        # and in bf16 what bitsandbytes did not quantize (norms, fused routed experts), then
        # dequantizes one linear at a time
        nf4 = min(per_layer, bnb_4bit_params(job.arch) / job.arch.layers / par.tp) \
            if sharded else 0
        return component("temporary", "2 * (nf4_params * nf4_bits / 8 + other_params * 2)",
                         "ZeRO-3 / FSDP all-gather and prefetch", "gathered layers",
                         nf4_params=nf4, nf4_bits=NF4_BITS_PER_WEIGHT,
                         other_params=per_layer - nf4)
    e = compute_dtype_bytes(job.precision)
    return component("temporary", "layer_params * (2 * weight_bytes + grad_bytes)",
                     "ZeRO-3 / FSDP all-gather and prefetch", "gathered layers",
                     layer_params=per_layer, weight_bytes=e, grad_bytes=grad)


def gradient_buckets(job: Job) -> Component:
    """Gradient reduction buckets: DDP and ZeRO-1/2 across data-parallel ranks, and the
    buckets ZeRO-Offload reduces through on their way to the CPU. DeepSpeed's ZeRO-1/2 reduce
    through two reduce_bucket_size buffers in the gradients' dtype."""
    par = job.parallel
    if states_framework(job) == "deepspeed" and par.zero_stage in (1, 2) and (
            par.zero_shards > 1 or job.offload != "none"):
        return component("temporary", "buffers * bucket_elements * grad_bytes",
                         "DeepSpeed stage_1_and_2.py backward(): contiguous_gradients and "
                         "overlap_comm", "gradient reduce buffers", buffers=2,
                         bucket_elements=DEEPSPEED_REDUCE_BUCKET,
                         grad_bytes=compute_dtype_bytes(job.precision))
    reduces = par.dp > 1 and par.zero_stage < 3
    buckets = DDP_BUCKET_BYTES if reduces or job.offload != "none" else 0
    return component("temporary", "buckets", "DDP bucket_cap_mb=25, two buckets in flight",
                     "gradient buckets", buckets=buckets)


def embedding_gradient(job: Job, regime: Regime) -> Component:
    """A tied embedding's dense V x h gradient, accumulated into the LM head's gradient."""
    arch = job.arch
    tied = arch.tied_embeddings and not regime.adapters
    pb = gradient_bytes_per_param(job.precision, states_framework(job))
    return component("temporary", "vocab * hidden * grad_bytes / tp",
                     "PyTorch AccumulateGrad", "the tied embedding's gradient",
                     vocab=arch.vocab if tied else 0, hidden=arch.hidden, grad_bytes=pb,
                     tp=job.parallel.tp)


def step_temporaries(job: Job) -> Component:
    """``torch.optim.AdamW(foreach=True)`` materializes one parameter-sized list
    (``torch._foreach_sqrt(exp_avg_sqs)``); fused implementations update in place."""
    name = optimizer_name(job.optimizer)
    foreach = name.implementation == "foreach" and name.family == "adamw"
    params = trainable_rank_params(job)
    per = weight_bytes_per_param(job.precision, states_framework(job)) if job.trains_all_weights else 4
    shards = job.parallel.zero_shards if job.parallel.zero_stage >= 1 else 1
    return component("temporary", "params * param_bytes / shards",
                     "torch/optim/adam.py _multi_tensor_adam", "the optimizer step's temporaries",
                     params=params.total if foreach else 0, param_bytes=per, shards=shards)


def lm_head_gradient(job: Job) -> Component:
    """The LM head's gradient, the first to exist in the backward."""
    arch = job.arch
    b = parameter_breakdown(arch)
    head = (b.lm_head or arch.vocab * arch.hidden) if job.trains_all_weights else 0
    pb = gradient_bytes_per_param(job.precision, states_framework(job))
    return component("gradients", "head_params * grad_bytes / tp", "PyTorch autograd",
                     "the LM head's gradient", head_params=head, grad_bytes=pb,
                     tp=job.parallel.tp)
