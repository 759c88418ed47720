"""A fully resolved job: every knob has a concrete value (defaults filled in by ``resolve.py``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from service.core.hardware.gpus import Gpu
from service.core.job.choices import sequences_per_sample
from service.core.model.architecture import Architecture

Task = Literal["train", "finetune", "infer"]
Recompute = Literal["none", "selective", "full"]
Offload = Literal["none", "optimizer", "optimizer_and_params"]
FinetuneMethod = Literal["full", "lora", "qlora"]

@dataclass(frozen=True, slots=True)
class Parallelism:
    """How the GPUs are split. dp x tp x pp x cp = GPUs; ep carves experts out of dp."""

    dp: int = 1
    tp: int = 1
    pp: int = 1
    cp: int = 1
    ep: int = 1
    sequence_parallel: bool = False
    zero_stage: int = 0
    shard_group: int = 0  # HSDP: ZeRO shards within groups of this many DP ranks; 0 = all of dp
    pp_schedule: str = "1f1b"
    virtual_stages: int = 1

    @property
    def gpus(self) -> int:
        return self.dp * self.tp * self.pp * self.cp

    @property
    def zero_shards(self) -> int:
        """How many ranks share one copy of the sharded model states: the data-parallel ranks
        with the context-parallel ones, which hold the same weights (Megatron-LM's distributed
        optimizer and gradient reduction use the data-parallel group with context parallelism;
        torchtitan shards FSDP over dp_shard x cp), or the HSDP group."""
        return self.shard_group or self.dp * self.cp


# a pipeline keeps its bubble under 25% with 4 micro-batches per stage in a step (1F1B:
# (pp - 1) / m, Narayanan et al. 2021, sec. 2.2): the micro-batches assumed when no global
# batch is stated, by the resolved job and by the planner alike
PIPELINE_MICRO_BATCHES_PER_STAGE = 4


@dataclass(frozen=True, slots=True)
class Job:
    arch: Architecture
    model_id: str
    param_scale: float = 1.0  # stated size / shape's count, for bare sizes ("7B" = 7.00e9)
    task: Task = "train"
    finetune_method: FinetuneMethod = "full"
    objective: str = "sft"  # job/objective.py: preference objectives pair sequences, add a reference
    precomputed_reference: bool = False  # TRL precompute_ref_log_probs: no reference model in training
    seq_len: int = 4096
    micro_batch: int = 1
    global_batch: int = 0  # 0: one micro-batch per DP rank, no accumulation
    precision: str = "bf16_mixed"
    optimizer: str = "adamw"
    framework: str = "deepspeed"
    parallel: Parallelism = field(default_factory=Parallelism)
    recompute: Recompute = "none"
    flash_attn: bool = True
    chunked_loss: bool = False  # fused linear cross-entropy (Liger Kernel): logits in chunks
    offload: Offload = "none"
    lora_rank: int = 16
    lora_targets: str = "all_linear"
    lora_slots: int = 0  # serving: LoRA adapters held at once at lora_rank (vLLM --max-loras)
    quantization: str = "none"
    kv_cache_dtype: str = "auto"
    batch: int = 1  # serving: sequences decoded together
    max_num_seqs: int = 0  # serving: the engine's cap on running sequences (0: none stated)
    gpu: Gpu | None = None
    activation_model: str = "hf"
    overhead_model: str = "measured"
    cuda_context_bytes: int | None = None  # None: the measured default (memory/overhead.py)
    allocator_reserve: float | None = None  # None: the measured default

    @property
    def forward_batch(self) -> int:
        """Sequences a micro-batch puts through the model: chosen and rejected for paired
        preference objectives (DPO, ORPO, ...)."""
        return self.micro_batch * sequences_per_sample(self.objective)

    @property
    def tokens_per_micro_batch(self) -> int:
        return self.seq_len * self.forward_batch

    @property
    def grad_accum(self) -> int:
        per_step = self.micro_batch * self.parallel.dp
        if not self.global_batch:
            return 1
        return max(1, -(-self.global_batch // per_step))

    @property
    def is_training(self) -> bool:
        return self.task != "infer"

    @property
    def trains_all_weights(self) -> bool:
        return self.task == "train" or self.finetune_method == "full"
