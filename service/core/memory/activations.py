"""Activation memory of one GPU during training: layers, recompute, parallelism, logits.

Named models:
- ``hf`` / ``megatron``: the architecture's real tensors, item by item (``saved_tensors.py``);
- ``korthikanti``: s*b*h*(34 + 5*a*s/h) bytes per layer (Korthikanti et al. 2022, eq. 2),
  selective recompute drops the 5as/h term, full recompute keeps 2sbh; no logits term;
- ``seed_s3``: the S3 seed's block model 32*s*b*h + 4*a*s^2*b bytes, full recompute keeps
  2sbh per block plus one block's working set (see seed-cases.md, S3).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from service.core.job.spec import Job
from service.core.memory.formula import Component, component
from service.core.memory.precision import compute_dtype_bytes
from service.core.memory.regime import regime_of
from service.core.memory.saved_layer import layer_saved
from service.core.memory.saved_op_sac import op_sac_applies, op_sac_saved
from service.core.memory.saved_tensors import LayerSetup, Saved, dropout_mask, norm_saved

ITEMIZED_PROFILES = ("hf", "hf_cpu", "megatron")


@dataclass(frozen=True, slots=True)
class ActivationBreakdown:
    per_layer_bytes: int  # one layer, one micro-batch, this GPU's share (no recompute applied)
    kept_layer_bytes: float  # what one layer keeps for one micro-batch, recompute applied
    non_layer_bytes: int  # embedding, final norm, logits and loss
    working_set_bytes: int  # one layer recomputed during backward (full recompute)
    in_flight_micro_batches: float
    layers_on_gpu: int

    @property
    def layers_bytes(self) -> int:
        """All layers this GPU keeps, with recompute and the micro-batches in flight."""
        return round(self.kept_layer_bytes * self.layers_on_gpu * self.in_flight_micro_batches)


def layer_setup(job: Job) -> LayerSetup:
    profile = job.activation_model if job.activation_model in ITEMIZED_PROFILES else "hf"
    fp8_linears = 1 if job.precision == "fp8" else 0
    regime = regime_of(job)
    return LayerSetup(job.seq_len, compute_dtype_bytes(job.precision), job.flash_attn, profile,
                      fp8_linears, job.forward_batch, autocast=regime.autocast,
                      adapter_rank=job.lora_rank if regime.adapters else 0,
                      adapter_targets=job.lora_targets, residual_bytes=regime.residual_bytes,
                      mlp_bytes=regime.mlp_bytes)


def _items_bytes(items: Sequence[Saved], job: Job, skip_core: bool = False) -> float:
    """Bytes per micro-batch on one GPU: tokens/cp x per-token bytes, TP split where it applies."""
    par = job.parallel
    tokens = job.tokens_per_micro_batch / par.cp
    total = 0.0
    for item in items:
        if skip_core and item.core:
            continue
        split = par.tp if (item.tp_split or par.sequence_parallel) else 1
        total += item.bytes_per_token * tokens / split
    return total


def layer_bytes(job: Job, moe_layer: bool, skip_core: bool = False,
                setup: LayerSetup | None = None) -> float:
    return _items_bytes(layer_saved(job.arch, setup or layer_setup(job), moe_layer), job,
                        skip_core)


def checkpoint_bytes(job: Job, setup: LayerSetup | None = None) -> float:
    """What full recompute keeps per layer: the layer input, a residual-stream element per
    hidden unit per token (fp32 under autocast and in QLoRA; split by SP)."""
    rs = (setup or layer_setup(job)).rs
    return _items_bytes([Saved("layer input", rs * job.arch.hidden, False)], job)


def op_level_sac(job: Job) -> bool:
    """Selective recompute in torchtitan (the ``fsdp`` stack: ``training_stack.py``) is its
    op-level policy (``saved_op_sac.py``); Megatron-LM's drops core attention."""
    return job.recompute == "selective" and job.framework == "fsdp" \
        and job.activation_model in ITEMIZED_PROFILES


def _op_sac_bytes(job: Job, moe_layer: bool, setup: LayerSetup) -> float:
    if not op_sac_applies(job.arch, moe_layer):
        return layer_bytes(job, moe_layer, False, setup)
    return _items_bytes(op_sac_saved(job.arch, setup), job)


def in_flight_micro_batches(job: Job) -> float:
    """Micro-batches whose activations the first pipeline stage holds at once.

    1F1B: min(pp, micro-batches per step) (Narayanan et al. 2021, sec. 2.2);
    interleaved with v virtual stages: x (1 + (pp-1)/(pp*v)) (Korthikanti et al. 2022, sec. 4.2.3).
    """
    pp = job.parallel.pp
    if pp == 1:
        return 1.0
    flight = float(min(pp, job.grad_accum))
    if job.parallel.pp_schedule == "interleaved":
        flight *= 1 + (pp - 1) / (pp * job.parallel.virtual_stages)
    return flight


def non_layer_saved(job: Job, setup: LayerSetup | None = None) -> list[Saved]:
    """Embedding, final norm and the logits/loss term, bytes per token (last stage).

    HF causal-LM loss upcasts logits to fp32 and ``cross_entropy`` keeps the fp32
    log-softmax: 4V per token (Gemma 2's final soft-capping also keeps a 16-bit tanh, e*V);
    the token ids and shifted labels (int64, 8 + 8), the final norm and the LM-head input.
    Shared by every layer: the rotary cos/sin tables, 2 x e x s x rotary dims per micro-batch;
    with full recompute, the position ids (8s) and, with eager attention, the 4-D causal
    mask(s) the checkpoints hold (e x b x s^2, one per distinct mask: two when sliding and
    global layers mix). Vocab-parallel LM heads split V by TP.
    """
    arch, s = job.arch, setup or layer_setup(job)
    e, b = s.elem_bytes, job.forward_batch
    items = norm_saved(arch, s, "final norm")
    if not s.adapters:  # a frozen LM head keeps no input
        items.append(Saved("lm-head input", s.lin * arch.hidden, False))
    if job.chunked_loss:  # the fused kernel keeps the gradient of its input instead
        items.append(Saved("loss kernel's input gradient", e * arch.hidden, False))
    else:
        items.append(Saved("fp32 log-softmax of logits",
                           (4 + (e if arch.final_softcap else 0)) * arch.vocab, True))
    items.append(Saved("token ids and labels (int64)", 16, False))
    if arch.positions == "rotary" and s.hf:  # computed in the hidden states' dtype
        rot = arch.head_dim_resolved * arch.rotary_fraction
        items.append(Saved("rotary cos/sin tables", 2 * s.rs * rot / b, False))
    if arch.dropout > 0:
        items.append(dropout_mask(s, "embedding", arch.hidden, False))
    if job.recompute == "full" and s.hf:
        items.append(Saved("position ids held by checkpoints", 8 / b, False))
        if not job.flash_attn:
            mixed = 0 < arch.sliding_window_layers < 1 and arch.sliding_window > 0
            masks = 2 if mixed else 1
            items.append(Saved("causal mask(s) held by checkpoints",
                               masks * s.rs * job.seq_len, False))
    return items


def non_layer_bytes(job: Job, setup: LayerSetup | None = None) -> float:
    return _items_bytes(non_layer_saved(job, setup), job)


def korthikanti_layer_bytes(job: Job) -> float:
    """s*b*h*(34 + 5*a*s/h) per layer; with TP t: s*b*h*(10 + 24/t + 5*a*s/(h*t)); with SP
    every term / t. Selective recompute and FlashAttention drop the 5as/h term."""
    arch, par = job.arch, job.parallel
    s, b, h, a, t = job.seq_len, job.forward_batch, arch.hidden, arch.heads, par.tp
    attn = 0.0 if (job.recompute == "selective" or job.flash_attn) else 5 * a * s / h
    base = 34 / t if par.sequence_parallel else 10 + 24 / t
    return s / par.cp * b * h * (base + attn / t)


def seed_s3_block_bytes(job: Job) -> float:
    """The S3 seed's block: 32*s*b*h + 4*a*s^2*b bytes (no s^2 term with FlashAttention)."""
    arch = job.arch
    s, b = job.seq_len, job.forward_batch
    s2 = 0.0 if job.flash_attn else 4 * arch.heads * s * s * b
    return 32 * s * b * arch.hidden + s2


def activation_breakdown(job: Job) -> ActivationBreakdown:
    arch, par = job.arch, job.parallel
    layers_on_gpu = -(-arch.layers // par.pp)
    flight = in_flight_micro_batches(job)
    model = job.activation_model
    if model in ("korthikanti", "seed_s3"):
        per = korthikanti_layer_bytes(job) if model == "korthikanti" else seed_s3_block_bytes(job)
        sp_split = par.tp if par.sequence_parallel else 1
        checkpoint = 2 * job.seq_len / par.cp * job.forward_batch * arch.hidden / sp_split
        kept = checkpoint if job.recompute == "full" else per
        working = per if (job.recompute == "full" and model == "seed_s3") else 0.0
        return ActivationBreakdown(round(per), kept, 0, round(working), flight, layers_on_gpu)
    moe_share = arch.moe_layers / arch.layers
    skip_core = job.recompute == "selective"
    setup = layer_setup(job)
    per_layer = (1 - moe_share) * layer_bytes(job, False, skip_core, setup)
    if arch.moe is not None:
        per_layer += moe_share * layer_bytes(job, True, skip_core, setup)
    if job.recompute == "full":
        kept = checkpoint_bytes(job, setup)
        working = per_layer
    elif op_level_sac(job):  # torchtitan: a layer recomputed in backward, as with full
        kept = (1 - moe_share) * _op_sac_bytes(job, False, setup)
        if arch.moe is not None:
            kept += moe_share * _op_sac_bytes(job, True, setup)
        working = per_layer
    else:
        kept, working = per_layer, 0.0
    return ActivationBreakdown(
        per_layer_bytes=round(per_layer),
        kept_layer_bytes=kept,
        non_layer_bytes=round(non_layer_bytes(job, setup)),
        working_set_bytes=round(working),
        in_flight_micro_batches=flight,
        layers_on_gpu=layers_on_gpu,
    )


ACTIVATION_SOURCES = {
    "hf": "saved tensors of HF transformers modules, checked in bench/measure",
    "hf_cpu": "saved tensors of HF transformers modules on CPU, as measured in bench/measure",
    "megatron": "Korthikanti et al. 2022 eq. 2, generalised to GQA/SwiGLU (saved_tensors.py)",
    "korthikanti": "Korthikanti et al. 2022, arXiv 2205.05198, eq. 2",
    "seed_s3": "the S3 seed's block model (seed-cases.md)",
}
KEPT = {"none": "all saved tensors", "selective": "core attention recomputed",
        "full": "layer inputs only"}
OP_SAC_KEPT = ("torchtitan op-level selective checkpointing: the layer input, every second "
               "matmul output and SDPA's output (norms, activations and the other matmuls "
               "recomputed)")


def activations_component(job: Job, acts: ActivationBreakdown) -> Component:
    """Layers x kept bytes per layer x micro-batches in flight, plus the logits/loss term.

    pp = 1: all of it. pp > 1: the busier of the first stage (its layers for every in-flight
    micro-batch) and the last (its layers for one micro-batch, plus the logits)."""
    terms = {"layers_on_gpu": acts.layers_on_gpu, "layer_bytes": acts.kept_layer_bytes,
             "in_flight": acts.in_flight_micro_batches, "logits_bytes": acts.non_layer_bytes}
    note = f"per layer: {OP_SAC_KEPT if op_level_sac(job) else KEPT[job.recompute]}"
    source = ACTIVATION_SOURCES[job.activation_model] + (
        "; torchtitan activation_checkpoint.py op-level policy" if op_level_sac(job) else "")
    if job.parallel.pp == 1:
        return component("activations", "layers_on_gpu * layer_bytes * in_flight + logits_bytes",
                         source, note, **terms)
    return component("activations", "max(layers_on_gpu * layer_bytes * in_flight, "
                     "layers_on_gpu * layer_bytes + logits_bytes)", source,
                     note + "; the busier of the first and last pipeline stage", **terms)
