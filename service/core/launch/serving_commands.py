"""The serving command lines of a plan: ``vllm serve`` (vLLM 0.33 ``make_arg_parser``) and
``python -m sglang.launch_server`` (SGLang 0.5.23 ``ServerArgs.add_cli_args``).

Both take the plan's tensor and pipeline split, the context, the concurrent sequences, the
memory fraction the plan budgeted, and the weight and KV-cache formats the request stated (a
model's native checkpoint format is read from its config, so no flag)."""

from __future__ import annotations

import math

from service.core.hardware.gpus import Gpu
from service.core.job.resolve import ResolvedJob
from service.core.launch.launch_shape import ModelRef, model_note, shell_line
from service.core.launch.launch_types import LaunchConfig
from service.core.planning.plan_types import ServingFit
from service.core.units import counted

# fitcheck quantization / KV dtype -> each server's value (absent: the server cannot load it)
VLLM_QUANT = {"fp8": "fp8", "fp8-block": "fp8_per_block", "fp8-ffn": "fbgemm_fp8", "awq": "awq",
              "gptq": "gptq", "gptq-8bit": "gptq", "int4": "awq", "mxfp4": "mxfp4"}
SGLANG_QUANT = {"fp8": "fp8", "fp8-block": "fp8", "fp8-ffn": "fbgemm_fp8", "awq": "awq",
                "gptq": "gptq", "gptq-8bit": "gptq", "int4": "awq", "int8": "w8a8_int8",
                "nf4": "bitsandbytes", "mxfp4": "mxfp4", **{f"gguf-{level}": "gguf" for level in (
                    "q8_0", "q6_k", "q5_k_m", "q5_0", "q4_k_m", "q4_0", "q3_k_m", "q2_k")}}
VLLM_KV = {"fp8": "fp8", "bf16": "bfloat16", "fp16": "float16", "int8": "int8_per_token_head",
           "int4": "int4_per_token_head"}
SGLANG_KV = {"fp8": "fp8_e4m3", "bf16": "bf16"}
# vLLM keeps its Marlin kernels only when asked for them by name ("forcing awq. Use
# quantization=awq_marlin for faster inference", AWQMarlinConfig.override_quantization_method);
# Marlin runs on NVIDIA GPUs from Ampere (sm80) on
MARLIN = {"awq": "awq_marlin", "gptq": "gptq_marlin"}
CHECKPOINT_NOTE = {"awq": "an AWQ checkpoint of the model", "gptq": "a GPTQ checkpoint",
                   "gptq-8bit": "an 8-bit GPTQ checkpoint", "int4": "an AWQ checkpoint",
                   "gguf": "the GGUF file"}


def _has_marlin(gpu: Gpu | None) -> bool:
    """NVIDIA with bf16 tensor cores (Ampere and later): where Marlin's kernels run."""
    return gpu is not None and gpu.vendor == "nvidia" and gpu.bf16_dense_tflops is not None


def _formats(resolved: ResolvedJob, quant: dict[str, str], kv: dict[str, str],
             ref: ModelRef) -> tuple[list[str], list[str]] | None:
    """(the quantization and KV flags' values as [name, value], notes), or None when the
    server cannot load the stated format."""
    job, out, notes = resolved.job, [], []
    native = resolved.model.weight_format
    if resolved.pinned("quantization") and (job.quantization == native != "bf16" or ref.quantized):
        # the checkpoint is already in that format (the model's own, or the published FP8 one
        # loaded in its place): the server reads its quantization_config (SGLang's DeepSeek
        # docs: no --quantization fp8 on the FP8 checkpoint)
        notes.append(f"no --quantization: the checkpoint's weights are {job.quantization} "
                     "already, and the server reads its quantization_config")
    elif resolved.pinned("quantization") and job.quantization not in ("none", "bf16", "fp16"):
        if job.quantization not in quant:
            return None
        method = quant[job.quantization]
        if quant is VLLM_QUANT and method in MARLIN and _has_marlin(job.gpu):
            method = MARLIN[method]  # an explicit awq/gptq forces vLLM's slow legacy kernels
        out += ["--quantization", method]
        family = job.quantization.split("-")[0]
        if job.quantization in CHECKPOINT_NOTE or family in CHECKPOINT_NOTE:
            notes.append("load " + CHECKPOINT_NOTE.get(job.quantization, CHECKPOINT_NOTE[family])
                         + " (its Hugging Face repo or path) in place of the 16-bit one")
    if job.kv_cache_dtype not in ("auto",):
        if job.kv_cache_dtype not in kv:
            return None
        out += ["--kv-cache-dtype", kv[job.kv_cache_dtype]]
    return out, notes


def _running(resolved: ResolvedJob, fit: ServingFit) -> tuple[int, tuple[str, ...]]:
    """The server's cap on sequences in flight: the stated concurrency, else the room the KV
    cache has at the full context (a cap of the default one sequence would serve one at a
    time)."""
    room = fit.max_concurrent // fit.replicas  # each replica schedules its own sequences
    cap = resolved.job.max_num_seqs
    if cap and not (resolved.pinned("concurrent") or resolved.pinned("batch")):
        return cap, ((f"--max-num-seqs {cap} as given: {room:,} fit at {fit.context:,} tokens"
                      + (" per replica" if fit.replicas > 1 else "")
                      + "; past that the engine queues or preempts"),) if room < cap else ()
    if resolved.pinned("concurrent") or resolved.pinned("batch") or room < 1:
        return fit.per_replica, ()
    return max(fit.per_replica, room), (
        f"no concurrency stated: the cap on sequences in flight is the KV cache's room at "
        f"{fit.context:,} tokens ({room:,}"
        + (" per replica" if fit.replicas > 1 else "") + "); shorter sequences leave room for more",)


def _replicas(fit: ServingFit, flag: str, moe: bool) -> tuple[list[str], tuple[str, ...]]:
    """The data-parallel flag when the replicas share one node, else one server per replica:
    a multi-node data-parallel launch needs per-node ranks and addresses, and an MoE model's
    data-parallel ranks are not independent in vLLM (its experts form one DP x TP group that
    steps in lockstep), so independent servers behind a load balancer are what was sized."""
    if fit.replicas == 1:
        return [], ()
    size = counted(fit.tp * fit.pp, "GPU")
    if fit.nodes > 1 or moe:
        return [], (f"{fit.replicas} replicas of {size}: run this command once per replica "
                    "(on its own GPUs, e.g. CUDA_VISIBLE_DEVICES) behind a load balancer",)
    return [flag, str(fit.replicas)], (
        f"{fit.replicas} replicas of {size}: one server with {flag} {fit.replicas}, or "
        f"{fit.replicas} independent servers behind a load balancer",)


# vLLM's --max-lora-rank choices (EngineArgs, vllm 0.33)
VLLM_LORA_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)


def _lora_flags(resolved: ResolvedJob, slots_flag: str,
                ranks: tuple[int, ...] | None) -> list[str]:
    """The adapter slots the memory was sized for; a rank the engine does not offer is rounded
    up to the next it does (the buffers are allocated at that rank)."""
    job = resolved.job
    if not job.lora_slots:
        return []
    rank = next((r for r in ranks if r >= job.lora_rank), job.lora_rank) if ranks else job.lora_rank
    return ["--enable-lora", slots_flag, str(job.lora_slots), "--max-lora-rank", str(rank)]


def vllm_config(resolved: ResolvedJob, fit: ServingFit, ref: ModelRef) -> LaunchConfig | None:
    formats = _formats(resolved, VLLM_QUANT, VLLM_KV, ref)
    if formats is None:
        return None
    head = ["vllm", "serve", ref.path]
    options = ["--tensor-parallel-size", str(fit.tp)]
    if fit.pp > 1:
        options += ["--pipeline-parallel-size", str(fit.pp)]
    if fit.expert_parallel:  # attention data parallel, experts split over the same ranks
        dp_flags: list[str] = ["--data-parallel-size", str(fit.replicas),
                               "--enable-expert-parallel"]
        dp_note: tuple[str, ...] = (
            f"{fit.replicas} data-parallel attention ranks, each with its own KV cache and "
            f"--max-num-seqs sequences; the routed experts are split over them",)
        if fit.nodes > 1:  # vLLM's multi-node data-parallel deployment
            local = fit.gpus // fit.nodes // fit.tp
            dp_note += (f"across {fit.nodes} nodes, on the first add --data-parallel-size-local "
                        f"{local} --data-parallel-address <its IP> --data-parallel-rpc-port 13345; "
                        f"on node k (1..{fit.nodes - 1}) the same with --headless "
                        f"--data-parallel-start-rank {local}*k",)
        if fit.tp > 1:  # vLLM's expert-parallel group is every rank: TP x DP
            dp_note += (f"vLLM splits the routed experts over all TP x DP = {fit.gpus} GPUs: "
                        f"fewer per GPU than the EP={fit.replicas} sized here",)
    else:
        dp_flags, dp_note = _replicas(fit, "--data-parallel-size",
                                      resolved.job.arch.moe is not None)
    options += dp_flags
    running, running_note = _running(resolved, fit)
    options += ["--max-model-len", str(fit.context), "--max-num-seqs", str(running),
                "--gpu-memory-utilization", f"{fit.memory_fraction:.2f}", *formats[0]]
    options += _lora_flags(resolved, "--max-loras", VLLM_LORA_RANKS)
    if ref.remote_code:  # the model's own code from its repo (Moonshot's Kimi-K2 deploy guide)
        options.append("--trust-remote-code")
    notes = [*formats[1], *dp_note, *running_note, *model_note(ref)]
    if fit.nodes > 1 and fit.tp * fit.pp > 1 and fit.replicas == 1:
        notes.append("across nodes vLLM runs on a Ray cluster: start Ray on every node first")
    return LaunchConfig("vllm", "vLLM server", "shell", None, shell_line(head, options), None,
                        (*head, *options), tuple(notes))


def _static_fraction(resolved: ResolvedJob, fit: ServingFit) -> tuple[float, tuple[str, ...]]:
    """SGLang's --mem-fraction-static is the share for the weights and the KV cache pool only
    (sglang ``server_args``: activations, CUDA graphs and NCCL come out of the rest), unlike
    vLLM's --gpu-memory-utilization, which the sizing here follows: the weights plus the KV
    budget over the GPU's memory, rounded down (a stated fraction is kept)."""
    gpu = resolved.job.gpu
    if resolved.pinned("memory_headroom") or gpu is None:
        return fit.memory_fraction, ()
    static = math.floor((fit.weights_bytes + fit.kv_budget_bytes) / gpu.memory_bytes_usable * 100)
    return static / 100, (
        f"--mem-fraction-static {static / 100:.2f}: the weights and the KV cache pool sized here; "
        f"activations and CUDA graphs take the rest of the {fit.memory_fraction:.0%} budget",)


def sglang_config(resolved: ResolvedJob, fit: ServingFit, ref: ModelRef) -> LaunchConfig | None:
    formats = _formats(resolved, SGLANG_QUANT, SGLANG_KV, ref)
    if formats is None:
        return None
    head = ["python", "-m", "sglang.launch_server"]
    options = ["--model-path", ref.path, "--tp-size", str(fit.tp * (
        fit.replicas if fit.expert_parallel else 1))]
    if fit.pp > 1:
        options += ["--pp-size", str(fit.pp)]
    if fit.expert_parallel:  # SGLang's DP attention: attention in --attn-dp-size groups,
        # the MoE layers over all the GPUs (--tp-size)
        dp_flags: list[str] = ["--attn-dp-size", str(fit.replicas)]
        dp_note: tuple[str, ...] = (
            f"{fit.replicas} data-parallel attention ranks, each with its own KV cache; the "
            "routed experts are split over all the GPUs (SGLang releases before --attn-dp-size: "
            f"--dp-size {fit.replicas} --enable-dp-attention)",)
    else:
        dp_flags, dp_note = _replicas(fit, "--dp-size", resolved.job.arch.moe is not None)
    options += dp_flags
    running, running_note = _running(resolved, fit)
    if fit.expert_parallel:  # the cap is the server's; each DP attention rank takes 1/N of it
        running *= fit.replicas
    static, static_note = _static_fraction(resolved, fit)
    options += ["--context-length", str(fit.context), "--max-running-requests",
                str(running), "--mem-fraction-static", f"{static:.2f}", *formats[0]]
    options += _lora_flags(resolved, "--max-loras-per-batch", None)
    if ref.remote_code:
        options.append("--trust-remote-code")
    notes = [*formats[1], *dp_note, *running_note, *static_note, *model_note(ref)]
    if fit.nodes > 1 and (fit.replicas == 1 or fit.expert_parallel):
        notes.append(f"across {fit.nodes} nodes add --nnodes {fit.nodes}, --node-rank and "
                     "--dist-init-addr on each")
    return LaunchConfig("sglang", "SGLang server", "shell", None, shell_line(head, options),
                        None, (*head, *options), tuple(notes))
