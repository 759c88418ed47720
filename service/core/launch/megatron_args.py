"""Megatron-LM's ``pretrain_gpt.py`` arguments for a plan (flag names of megatron-core 0.19
``megatron/training/arguments.py``; allow_abbrev is off, so exact spellings only).

Parallelism, recompute, batches and sequence length come from the plan; the model's shape from
the architecture, so the line builds the same model fitcheck counted. Data, tokenizer
and learning-rate arguments stay the user's."""

from __future__ import annotations

from service.core.job.spec import Job
from service.core.launch.launch_shape import LaunchShape, ModelRef, model_note, shell_line
from service.core.launch.launch_types import LaunchConfig
from service.core.model.architecture import Architecture
from service.core.planning.plan_types import Layout

SCRIPT = "pretrain_gpt.py"
# ZeRO stage -> Megatron-FSDP's data-parallel sharding strategy
FSDP_SHARDING = {2: "optim_grads", 3: "optim_grads_params"}


def parallel_args(layout: Layout, job: Job) -> list[str]:
    args = ["--tensor-model-parallel-size", str(layout.tp),
            "--pipeline-model-parallel-size", str(layout.pp),
            "--context-parallel-size", str(layout.cp)]
    if layout.ep > 1:
        args += ["--expert-model-parallel-size", str(layout.ep)]
    if layout.sequence_parallel and layout.tp > 1:
        args.append("--sequence-parallel")
    virtual = job.parallel.virtual_stages
    if layout.pp > 1 and virtual > 1:
        args += ["--num-layers-per-virtual-pipeline-stage",
                 str(job.arch.layers // (layout.pp * virtual))]
    elif layout.pp > 1 and job.arch.layers % layout.pp:
        args += uneven_stage_args(job.arch.layers, layout.pp)
    if layout.zero_stage == 1:
        args.append("--use-distributed-optimizer")
    elif layout.zero_stage >= 2:
        # Megatron-FSDP saves only fsdp_dtensor checkpoints (arguments.py asserts it) and runs
        # without gradient-accumulation fusion
        args += ["--use-megatron-fsdp", "--data-parallel-sharding-strategy",
                 FSDP_SHARDING[layout.zero_stage], "--ckpt-format", "fsdp_dtensor",
                 "--no-gradient-accumulation-fusion"]
    if layout.recompute == "full":
        args += ["--recompute-granularity", "full", "--recompute-method", "uniform",
                 "--recompute-num-layers", "1"]
    elif layout.recompute == "selective":
        args += ["--recompute-granularity", "selective"]
    return args


def uneven_stage_args(layers: int, pp: int) -> list[str]:
    """Stages of at most ceil(L / pp) layers, as the planner counted them. Megatron's
    ``--decoder-{first,last}-pipeline-num-layers`` when equal middle stages can hold that (the
    ends lighter: they also carry the embedding and the loss); otherwise an explicit
    ``--pipeline-model-parallel-layout`` (stages split by '|', E embedding, t a decoder layer,
    L the loss; docs/api-guide/pipeline_parallel_layout.md)."""
    most = -(-layers // pp)
    ends = layers - (pp - 2) * most
    if 2 <= ends <= 2 * most:
        first = ends // 2
        return ["--decoder-first-pipeline-num-layers", str(first),
                "--decoder-last-pipeline-num-layers", str(ends - first)]
    fewer, fuller = divmod(layers, pp)
    # the fuller stages (fewer + 1 layers) in the middle, away from the embedding and loss
    start = (pp - fuller) // 2
    counts = [fewer + 1 if start <= i < start + fuller else fewer for i in range(pp)]
    stages = ["t" * n for n in counts]
    stages[0], stages[-1] = "E" + stages[0], stages[-1] + "L"
    return ["--pipeline-model-parallel-layout", "|".join(stages)]


def model_args(arch: Architecture, seq_len: int) -> list[str]:
    args = ["--num-layers", str(arch.layers), "--hidden-size", str(arch.hidden),
            "--ffn-hidden-size", str(arch.ffn), "--num-attention-heads", str(arch.heads),
            "--seq-length", str(seq_len), "--max-position-embeddings", str(seq_len),
            "--normalization", "RMSNorm" if arch.norm == "rmsnorm" else "LayerNorm"]
    kv = arch.kv_heads_resolved
    if kv != arch.heads:
        args += ["--group-query-attention", "--num-query-groups", str(kv)]
    if arch.head_dim and arch.head_dim * arch.heads != arch.hidden:
        args += ["--kv-channels", str(arch.head_dim)]
    if arch.mlp == "gated":
        args.append("--swiglu")
    # Megatron defaults both to 0.1; the model fitcheck counted keeps no dropout masks at 0
    args += ["--attention-dropout", f"{arch.dropout:g}", "--hidden-dropout", f"{arch.dropout:g}"]
    args += ["--position-embedding-type",
             "rope" if arch.positions == "rotary" else "learned_absolute"]
    if not arch.tied_embeddings:
        args.append("--untie-embeddings-and-output-weights")
    if not (arch.attn_out_bias or arch.mlp_bias):
        args.append("--disable-bias-linear")
    if arch.attn_bias:
        args.append("--add-qkv-bias")
    if arch.qk_norm:
        args.append("--qk-layernorm")
    if arch.mla is not None:
        mla = arch.mla
        args += ["--multi-latent-attention", "--kv-lora-rank", str(mla.kv_lora_rank),
                 "--qk-head-dim", str(mla.qk_nope_head_dim),
                 "--qk-pos-emb-head-dim", str(mla.qk_rope_head_dim),
                 "--v-head-dim", str(mla.v_head_dim)]
        if mla.q_lora_rank:
            args += ["--q-lora-rank", str(mla.q_lora_rank)]
    if arch.moe is not None:
        moe = arch.moe
        args += ["--num-experts", str(moe.experts), "--moe-router-topk",
                 str(moe.experts_per_token), "--moe-ffn-hidden-size", str(moe.expert_ffn),
                 "--moe-grouped-gemm"]
        if moe.shared_experts:
            width = (moe.shared_expert_ffn or moe.expert_ffn) * moe.shared_experts
            args += ["--moe-shared-expert-intermediate-size", str(width)]
    return args


def _moe_layer_freq(arch: Architecture) -> list[str]:
    """--moe-layer-freq as the Python list expression Megatron evaluates (0 dense, 1 MoE):
    DeepSeek-V3's 3 dense layers then 58 MoE, "[0]*3+[1]*58"; Llama 4 Maverick's alternating
    layers, "([0]*1+[1])*24". Every layer MoE needs none (the default 1)."""
    moe = arch.moe
    if moe is None or (moe.dense_layers == 0 and moe.layer_step == 1):
        return []
    first, step = moe.dense_layers, moe.layer_step
    rest = arch.layers - first
    if rest % step:
        return []
    dense = f"[0]*{first}+" if first else ""
    pattern = f"[1]*{rest}" if step == 1 else f"([0]*{step - 1}+[1])*{rest // step}"
    return ["--moe-layer-freq", dense + pattern]


def megatron_args(job: Job, layout: Layout, shape: LaunchShape, ref: ModelRef) -> list[str]:
    """The arguments after ``pretrain_gpt.py``."""
    # fp8: Transformer Engine's linears in FP8, E4M3 forward and E5M2 gradients ("hybrid")
    precision = {"bf16": ["--bf16"], "fp8": ["--bf16", "--fp8-format", "hybrid"],
                 "fp16": ["--fp16"]}.get(shape.precision, [])
    moe: list[str] = []
    if job.arch.moe is not None:
        moe += _moe_layer_freq(job.arch)
        if layout.ep > 1:  # Megatron's guide: all-to-all dispatch with expert parallelism
            moe += ["--moe-token-dispatcher-type", "alltoall"]
    return [*parallel_args(layout, job), *moe,
            "--micro-batch-size", str(shape.micro_batch),
            "--global-batch-size", str(shape.global_batch),
            *model_args(job.arch, job.seq_len), *precision,
            "--tokenizer-type", "HuggingFaceTokenizer", "--tokenizer-model", ref.path]


def megatron_config(job: Job, layout: Layout, shape: LaunchShape, ref: ModelRef) -> LaunchConfig:
    args = megatron_args(job, layout, shape, ref)
    argv = [SCRIPT, *args]
    notes = ["add your data (--data-path), --train-iters and learning-rate arguments",
             "run it with the torchrun line below, on every node", *model_note(ref)]
    arch = job.arch
    if arch.linear_attention is not None or arch.vision is not None:
        notes.append("the arguments describe the decoder's attention layers only: "
                     "linear-attention and vision parts need Megatron's model specs")
    if job.gpu is not None and job.gpu.vendor == "amd":  # upstream's fused kernels are CUDA's
        notes.append("on AMD Instinct GPUs run AMD's ROCm build of Megatron-LM "
                     "(github.com/ROCm/Megatron-LM, with ROCm's Transformer Engine)")
    if shape.precision == "fp8":
        notes.append("fp8 linears need Transformer Engine installed (--transformer-impl "
                     "transformer_engine, the default)")
    if job.task == "finetune":
        notes.append("fine-tuning: convert the Hugging Face checkpoint to Megatron's format "
                     "(Megatron Bridge) and add --load <its folder> --finetune --no-load-optim, "
                     "or it trains from random weights")
    if arch.positions == "rotary":
        llama3 = job.model_id.startswith(("llama-3", "llama3"))
        notes.append("set --rotary-base to the model's rope_theta from its config.json "
                     "(Megatron's default is 10000" + ("; Llama 3 uses 500000, and Llama 3.1 and "
                     "later also --use-rope-scaling)" if llama3 else ")"))
    return LaunchConfig("megatron", "Megatron-LM arguments", "shell", None,
                        shell_line([SCRIPT], args),
                        None, tuple(argv), tuple(notes))
