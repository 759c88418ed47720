"""Weights, gradients and optimizer state on one GPU, after model parallelism and ZeRO.

Model parallelism first (Megatron-LM, Shoeybi et al. 2019; Narayanan et al. 2021): TP splits
every layer matrix and the vocabulary, PP gives each stage layers/pp, the first stage also holds
the embedding and the last the LM head, EP spreads routed experts. Then ZeRO (Rajbhandari et
al. 2019) shards over the data-parallel group: stage 1 optimizer state, stage 2 also
gradients, stage 3 (= FSDP FULL_SHARD) also weights. HSDP shards within ``shard_group`` ranks.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from service.core.job.choices import WITH_REFERENCE, optimizer_name
from service.core.job.spec import Job, Parallelism
from service.core.memory.formula import Component, component, component_of
from service.core.memory.lora import (
    ADAPTER_BYTES_PER_PARAM,
    NF4_BITS_PER_WEIGHT,
    bnb_4bit_params,
)
from service.core.memory.precision import (
    compute_dtype_bytes,
    gradient_bytes_per_param,
    master_bytes_per_param,
    optimizer_state_bytes_per_param,
    weight_bytes_per_param,
)
from service.core.memory.regime import regime_of, states_framework
from service.core.model.adapter_params import lora_params
from service.core.model.architecture import Architecture
from service.core.model.linears import (
    attention_linear_shapes,
    mlp_linear_shapes,
)
from service.core.model.params import dense_mlp_params, parameter_breakdown
from service.core.model.stage_params import stage_params

ZERO_SOURCE = "ZeRO, Rajbhandari et al. 2019, sec. 5; DeepSpeed runtime/zero"
FSDP_QLORA_SOURCE = ("FSDP-QLoRA (Answer.AI 2024; bitsandbytes docs 'FSDP-QLoRA'): with "
                     "bnb_4bit_quant_storage=bfloat16 FSDP / ZeRO-3 shards the 4-bit base, "
                     "and the other parameters stay in the bf16 storage dtype")


@dataclass(frozen=True, slots=True)
class RankParams:
    """Parameters one GPU holds before ZeRO sharding: dense and routed-expert parts."""

    dense: int
    experts: int

    @property
    def total(self) -> int:
        return self.dense + self.experts


def routed_expert_params(arch: Architecture) -> int:
    if arch.moe is None:
        return 0
    return arch.moe_layers * arch.moe.experts * dense_mlp_params(arch, arch.moe.expert_ffn)


def rank_params(arch: Architecture, par: Parallelism, scale: float = 1.0) -> RankParams:
    """Params on the most loaded model-parallel rank (see ``_rank_params``)."""
    return _rank_params(arch, par.tp, par.pp, par.ep, scale)


@lru_cache(maxsize=4096)  # the planner asks for the same split of one model many times
def _rank_params(arch: Architecture, tp: int, pp: int, ep: int, scale: float) -> RankParams:
    """Params on the most loaded model-parallel rank.

    Layers: the heaviest stage's ceil(L/pp) layers, / tp; routed experts also / ep. With pp > 1
    the heavier of the first stage (embedding) and the last (LM head + final norm) counts; tied embeddings
    are then held by both ends (Megatron ``shared_embedding``).
    """
    b = parameter_breakdown(arch)
    vocab_matrix = arch.vocab * arch.hidden
    if pp == 1:
        ends = b.embedding + b.lm_head
    else:
        head = vocab_matrix if arch.tied_embeddings else b.lm_head
        ends = max(b.embedding, head)
    # the heaviest stage: its own layers (``stage_params``: DeepSeek-V3's dense first layers,
    # Llama 4 Maverick's alternating MoE layers), / tp, routed experts also / ep
    dense, expert_part = max(
        ((-(-stage.dense // tp) + -(-ends // tp), -(-stage.experts // (tp * ep)))
         for stage in stage_params(arch, pp)), key=sum)
    return RankParams(dense=round(dense * scale), experts=round(expert_part * scale))


def stage_split(count: int, arch: Architecture, par: Parallelism, round_up: bool = False) -> int:
    """A count spread over the layers (adapter or 4-bit parameters, factored optimizer bytes)
    on the busiest model-parallel rank: the heaviest pipeline stage's ceil(L/pp) of L layers,
    / tp (``count // (tp * pp)`` when the stages are even)."""
    spread = count * -(-arch.layers // par.pp)
    ranks = arch.layers * par.tp
    return -(-spread // ranks) if round_up else spread // ranks


def _shards(par: Parallelism, stage_needed: int, experts: bool = False) -> int:
    if par.zero_stage < stage_needed:
        return 1
    shards = par.zero_shards
    return max(1, shards // par.ep) if experts else shards


def sharded(key: str, params: RankParams, par: Parallelism, stage_needed: int,
            per_param: float, source: str, note: str = "") -> Component:
    """``params x bytes_per_param / shards``; routed experts shard over dp / ep ranks."""
    shards = _shards(par, stage_needed)
    if not params.experts:
        return component(key, "params * bytes_per_param / shards", source, note,
                         params=params.dense, bytes_per_param=per_param, shards=shards)
    return component(
        key, "dense_params * bytes_per_param / shards + expert_params * bytes_per_param "
        "/ expert_shards", source, note, dense_params=params.dense,
        expert_params=params.experts, bytes_per_param=per_param, shards=shards,
        expert_shards=_shards(par, stage_needed, experts=True))


def weights(job: Job) -> Component:
    """Working weights: P_rank x bytes / shards (ZeRO-3 shards them), plus fp32 LoRA adapters.

    QLoRA's base: the layers' linears in NF4; every other parameter (embeddings, LM head,
    norms) fp32, as peft ``prepare_model_for_kbit_training`` casts them; sharded with ZeRO-3 /
    FSDP (FSDP-QLoRA), everything in the bf16 storage dtype, 1/shards per GPU."""
    par = job.parallel
    params = rank_params(job.arch, par, job.param_scale)
    adapters = 0 if job.trains_all_weights else stage_split(
        lora_params(job.arch, job.lora_rank, job.lora_targets), job.arch, par, round_up=True)
    if job.offload == "optimizer_and_params" and job.is_training and not adapters:
        return component("weights", "0", "ZeRO-Infinity, Rajbhandari et al. 2021",
                         "offloaded to CPU memory; prefetch buffers are in temporary")
    if job.offload == "optimizer_and_params" and job.is_training:
        # FSDP-QLoRA with CPU offload (Answer.AI fsdp_qlora): the sharded 4-bit base lives in
        # CPU memory; the GPU keeps the fp32 adapters
        return component("weights", "adapter_params * adapter_bytes",
                         "FSDP CPUOffload(offload_params=True); peft keeps LoRA adapters in fp32",
                         "base offloaded to CPU memory; gathered layers are in temporary",
                         adapter_params=adapters, adapter_bytes=ADAPTER_BYTES_PER_PARAM)
    if job.finetune_method == "qlora":
        linear = stage_split(bnb_4bit_params(job.arch), job.arch, par)
        if par.zero_stage >= 3 and par.zero_shards > 1:
            return component(
                "weights", "(linear_params * nf4_bits / 8 + other_params * other_bytes) / shards"
                " + adapter_params * adapter_bytes", FSDP_QLORA_SOURCE,
                linear_params=linear, nf4_bits=NF4_BITS_PER_WEIGHT,
                other_params=max(0, params.total - linear), other_bytes=2,
                shards=par.zero_shards, adapter_params=adapters,
                adapter_bytes=ADAPTER_BYTES_PER_PARAM)
        return component(
            "weights", "linear_params * nf4_bits / 8 + other_params * other_bytes "
            "+ adapter_params * adapter_bytes",
            "QLoRA, Dettmers et al. 2023, sec. 3 (NF4 + double quantization); peft "
            "prepare_model_for_kbit_training casts the rest to fp32",
            linear_params=linear, nf4_bits=NF4_BITS_PER_WEIGHT,
            other_params=max(0, params.total - linear), other_bytes=4,
            adapter_params=adapters, adapter_bytes=ADAPTER_BYTES_PER_PARAM)
    per = weight_bytes_per_param(job.precision, states_framework(job)) if job.trains_all_weights else 2.0
    if states_framework(job) == "fsdp" and par.zero_stage == 2 and par.zero_shards > 1 \
            and job.trains_all_weights and not params.experts and per > 2:
        # FSDP2 SHARD_GRAD_OP (reshard_after_forward=False): fp32 shards at rest, and the 16-bit
        # parameters all-gathered in the forward stay unsharded until the backward is done
        return component("weights", "params * (master_bytes / shards + compute_bytes)",
                         "PyTorch FSDP2 fully_shard(reshard_after_forward=False) with "
                         "MixedPrecisionPolicy(param_dtype=bf16)", "fp32 shards + unsharded "
                         "16-bit parameters", params=params.dense, master_bytes=per,
                         shards=par.zero_shards, compute_bytes=compute_dtype_bytes(job.precision))
    base = sharded("weights", params, par, 3, per, ZERO_SOURCE)
    if not adapters:
        return base
    return component_of("weights", f"{base.expression} + adapter_params * adapter_bytes",
                        {**base.term_map, "adapter_params": adapters,
                         "adapter_bytes": ADAPTER_BYTES_PER_PARAM},
                        ZERO_SOURCE + "; peft keeps LoRA adapters in fp32")


REFERENCE_NOTE = "the reference model"  # its formula's label: the reply says what it costs
REFERENCE_SOURCE = ("TRL create_reference_model (a frozen copy of the policy); "
                    "prepare_deepspeed runs it at ZeRO stage 0 unless ZeRO-3")


def reference_weights(job: Job) -> Component:
    """DPO, IPO, KTO: the frozen reference model, P_rank x bytes / shards, in the weights'
    dtype (fp32 under autocast, where the Trainer keeps fp32 weights), sharded with ZeRO-3 /
    FSDP full sharding, in CPU memory with parameter offload; none with adapters (the base with
    the adapters off is the reference) or without a reference (``job/objective.py``)."""
    par = job.parallel
    needed = job.objective in WITH_REFERENCE and job.trains_all_weights and job.is_training \
        and not job.precomputed_reference \
        and job.offload != "optimizer_and_params"
    if not needed:
        return component("weights", "0", REFERENCE_SOURCE, "no reference model on the GPU")
    params = rank_params(job.arch, par, job.param_scale)
    per = 4 if regime_of(job).autocast else compute_dtype_bytes(job.precision)
    return component("weights", "params * bytes_per_param / shards", REFERENCE_SOURCE,
                     REFERENCE_NOTE, params=params.total, bytes_per_param=per,
                     shards=par.zero_shards if par.zero_stage >= 3 else 1)


def trainable_rank_params(job: Job) -> RankParams:
    if job.trains_all_weights:
        return rank_params(job.arch, job.parallel, job.param_scale)
    adapters = lora_params(job.arch, job.lora_rank, job.lora_targets)
    return RankParams(dense=stage_split(adapters, job.arch, job.parallel, round_up=True),
                      experts=0)


OFFLOAD_SOURCE = ("ZeRO-Offload, Ren et al. 2021, sec. 4: gradients, optimizer states and the "
                  "optimizer step move to the CPU; DeepSpeed stage_1_and_2.py / stage3.py "
                  "cpu_offload copy each gradient partition to pinned CPU memory")


def gradients(job: Job) -> Component:
    """Gradients of trainable params: P_train x grad bytes / shards (ZeRO-2 and up shard them).
    With the optimizer offloaded, each gradient partition goes to the CPU as it is reduced;
    the GPU keeps only the reduction buckets (``transients.gradient_buckets``)."""
    if not job.is_training:
        return component("gradients", "0", "no gradients when serving")
    if job.offload != "none":
        return component("gradients", "0", OFFLOAD_SOURCE, "gradient partitions in CPU memory")
    if job.trains_all_weights:
        per = gradient_bytes_per_param(job.precision, states_framework(job))
    else:
        per = ADAPTER_BYTES_PER_PARAM
    return sharded("gradients", trainable_rank_params(job), job.parallel, 2, per, ZERO_SOURCE)


def optimizer_bytes_per_param(job: Job) -> float:
    if not job.trains_all_weights:
        # fp32 adapters: the optimizer updates them in place, no separate master copy.
        return optimizer_state_bytes_per_param(job.optimizer, "fp32")
    master = master_bytes_per_param(job.precision, states_framework(job))
    return master + optimizer_state_bytes_per_param(job.optimizer, job.precision)


def adafactor_state_bytes(arch: Architecture) -> int:
    """Adafactor's factored second moment: (rows + cols) x 4 B per matrix, n x 4 B per vector.

    Shazeer & Stern 2018, sec. 3; no first moment (``beta1=None``, the default).
    """
    per_layer = sum(i + o for i, o in attention_linear_shapes(arch))
    total = arch.layers * per_layer
    total += arch.dense_layers * sum(i + o for i, o in mlp_linear_shapes(arch, arch.ffn))
    if arch.moe is not None:
        expert = sum(i + o for i, o in mlp_linear_shapes(arch, arch.moe.expert_ffn))
        total += arch.moe_layers * (arch.moe.experts + arch.moe.shared_experts) * expert
    total += 2 * (arch.vocab + arch.hidden)
    total += (arch.layers * arch.norms_per_layer + 1) * arch.hidden
    return total * 4


def optimizer(job: Job) -> Component:
    """Optimizer state: P_train x (master + moments) / shards (ZeRO-1 and up shard it); offloaded
    state lives in CPU memory (``offloaded_bytes``)."""
    if not job.is_training:
        return component("optimizer", "0", "no optimizer when serving")
    source = "ZeRO sec. 3 (mixed-precision Adam 12 B/param); see precision.py"
    if job.offload != "none":
        return component("optimizer", "0", source, "kept in CPU memory (offload)")
    params = trainable_rank_params(job)
    per = optimizer_bytes_per_param(job)
    state = sharded("optimizer", params, job.parallel, 1, per, source)
    if optimizer_name(job.optimizer).family != "adafactor":
        return state
    factored = stage_split(adafactor_state_bytes(job.arch), job.arch, job.parallel)
    return component_of("optimizer", f"{state.expression} + factored_bytes / shards",
                        {**state.term_map, "factored_bytes": factored},
                        source + "; Adafactor: sum over matrices of (rows + cols) x 4 B")


def offloaded_bytes(job: Job) -> int:
    """Host (CPU) memory per GPU that offload uses: optimizer state and fp32 gradient
    partitions (ZeRO-Offload), and weights if asked (ZeRO-Infinity; for adapters, the frozen
    base as stored)."""
    if job.offload == "none" or not job.is_training:
        return 0
    par = job.parallel
    trainable = trainable_rank_params(job)
    moved = sharded("optimizer", trainable, par, 1, optimizer_bytes_per_param(job), "").bytes
    moved += sharded("gradients", trainable, par, 1, 4, "").bytes
    if job.offload == "optimizer_and_params":
        params = rank_params(job.arch, par, job.param_scale)
        if job.trains_all_weights:
            per = weight_bytes_per_param(job.precision, states_framework(job))
            moved += sharded("weights", params, par, 3, per, "").bytes
        else:  # the frozen base as stored: NF4 linears and bf16 rest (FSDP-QLoRA), or bf16
            linear = stage_split(bnb_4bit_params(job.arch), job.arch, par) \
                if job.finetune_method == "qlora" else 0
            base = linear * NF4_BITS_PER_WEIGHT / 8 + (params.total - linear) * 2
            moved += round(base / (par.zero_shards if par.zero_stage >= 3 else 1))
    return moved
