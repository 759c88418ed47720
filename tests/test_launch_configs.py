"""Every plan comes with launch configs that agree with it, and every key and flag in them is one
the tool itself defines (tests/data/launch_tools, taken from the tools' source)."""

from __future__ import annotations

import tomllib
from dataclasses import replace
from typing import Any

import pytest
import yaml
from engine_support import plan_of
from launch_tools import (
    check_accelerate_launch,
    check_accelerate_yaml,
    check_deepspeed,
    check_megatron,
    check_sglang,
    check_torchrun,
    check_torchtitan,
    check_vllm,
    tool,
)

from service.answers import compute_answer
from service.core.job.request import EstimateRequest
from service.core.job.resolve import resolve
from service.core.launch.launch_configs import stated_layout
from service.core.launch.launch_types import LaunchConfig
from service.core.launch.megatron_args import uneven_stage_args
from service.core.memory.job_memory import estimate
from service.core.planning.plan_types import Layout, Plan

R = EstimateRequest
TRAINING = {
    "deepspeed zero-3": R(model="llama-3.1-8b", seq_len=4096, zero_stage=3, gpu="a100-40gb"),
    "deepspeed offload": R(model="qwen2.5-32b", seq_len=4096, zero_stage=3, gpu="a100-40gb",
                           gpu_count=4, offload="optimizer"),
    "zero-infinity": R(model="qwen2.5-32b", seq_len=4096, gpu="a100-40gb", gpu_count=4,
                       offload="optimizer_and_params", zero_stage=3),
    "megatron 70b": R(model="llama-3.1-70b", seq_len=8192, global_batch=512, gpu="h100-80gb"),
    "megatron 405b pp": R(model="llama-3.1-405b", seq_len=8192, global_batch=2048,
                          gpu="h100-80gb"),
    "megatron interleaved": R(model="llama-3.1-70b", seq_len=4096, global_batch=256,
                              gpu="h100-80gb", gpu_count=32, framework="megatron", pp=4,
                              pp_schedule="interleaved", virtual_stages=2),
    "megatron moe": R(model="mixtral-8x22b", seq_len=4096, global_batch=512, gpu="h100-80gb"),
    "megatron mla": R(model="deepseek-v2-lite", seq_len=4096, global_batch=256,
                      gpu="h100-80gb", framework="megatron"),
    "fsdp torchtitan": R(model="llama-3.1-70b", seq_len=8192, global_batch=512,
                         gpu="h100-80gb", gpu_count=32, framework="fsdp", zero_stage=3),
    "fsdp accelerate tp": R(model="qwen2.5-32b", seq_len=8192, global_batch=64,
                            gpu="h100-80gb", gpu_count=16, framework="fsdp", tp=2,
                            zero_stage=3),
    "fp8 torchtitan": R(model="llama-3.1-8b", seq_len=8192, global_batch=256, gpu="h100-80gb",
                        gpu_count=8, framework="fsdp", zero_stage=3, precision="fp8"),
    "fp8 megatron": R(model="llama-3.1-70b", seq_len=8192, global_batch=512, gpu="h100-80gb",
                      framework="megatron", precision="fp8"),
    "trainer ddp": R(model="qwen2.5-0.5b", seq_len=2048, global_batch=64, gpu="h100-80gb",
                     gpu_count=8, framework="hf", zero_stage=0),
    "lora": R(model="llama-3.1-8b", task="finetune", finetune_method="lora", seq_len=2048,
              gpu="l40s-48gb", gpu_count=1),
    "fsdp-qlora": R(model="llama-3.1-70b", task="finetune", finetune_method="qlora",
                    seq_len=2048, gpu="rtx3090-24gb"),
    "fp16 chunked loss": R(model="llama-3.1-8b", task="finetune", seq_len=8192,
                           precision="fp16_mixed", chunked_loss=True, gpu="h100-80gb",
                           gpu_count=8, framework="deepspeed", zero_stage=2,
                           global_batch=64),
}
SERVING = {
    "vllm 70b": R(model="llama-3.1-70b", task="infer", seq_len=32768, concurrent=40,
                  gpu="h100-80gb"),
    "vllm fp8 kv": R(model="llama-3.1-8b", task="infer", seq_len=8192, concurrent=64,
                     kv_cache_dtype="fp8", gpu="l4-24gb"),
    "awq": R(model="qwen2.5-72b", task="infer", seq_len=32768, concurrent=32,
             quantization="awq", gpu="rtx4090-24gb"),
    "sglang": R(model="qwen2.5-32b", task="infer", seq_len=16384, concurrent=16,
                framework="sglang", gpu="a100-80gb"),
    "405b across nodes": R(model="llama-3.1-405b", task="infer", seq_len=8192, concurrent=8,
                           gpu="a100-80gb"),
    "native fp8 deepseek": R(model="deepseek-v3", task="infer", seq_len=8192, concurrent=16,
                             gpu="h200-141gb"),
    "deepseek dp attention": R(model="deepseek-v3", task="infer", seq_len=32768, concurrent=64,
                               gpu="h200-141gb", gpu_count=8),
    "deepseek dp attention sglang": R(model="deepseek-v3", task="infer", seq_len=32768,
                                      concurrent=64, framework="sglang", gpu="h200-141gb",
                                      gpu_count=8),
}


def launch_of(request: EstimateRequest) -> tuple[Plan, dict[str, LaunchConfig]]:
    plan = plan_of(request)
    return plan, compute_answer(request).answer.launch


def launched_layout(request: EstimateRequest, plan: Plan) -> Layout:
    """The layout the configs run: the request's own where it states one that fits on the
    given GPUs, else the planner's."""
    resolved = resolve(request)
    if plan.mode == "given" and resolved.layout_stated and estimate(resolved.job).fits:
        return stated_layout(resolved)
    assert plan.layout is not None
    return plan.layout


def check(config: LaunchConfig) -> list[str]:
    """Every problem the tool's own definitions find in one launch config."""
    argv = list(config.argv)
    if config.tool == "deepspeed":
        assert config.config is not None
        return check_deepspeed(config.config)
    if config.tool == "accelerate":
        assert config.config is not None
        return check_accelerate_yaml(yaml.safe_load(config.text)) + \
            check_accelerate_launch(argv)
    if config.tool == "torchtitan":
        return check_torchtitan(tomllib.loads(config.text))
    checks = {"torchrun": check_torchrun, "megatron": lambda a: check_megatron(a[1:]),
              "vllm": check_vllm, "sglang": check_sglang}
    return checks[config.tool](argv)


@pytest.mark.parametrize("name", sorted(TRAINING))
def test_training_configs_use_only_what_the_tools_define(name: str) -> None:
    plan, launch = launch_of(TRAINING[name])
    assert plan.fits, plan.why
    assert launch, f"{name}: no launch config for a plan that fits"
    for config in launch.values():
        assert check(config) == [], f"{name} / {config.tool}:\n{config.text}\n{config.command}"


@pytest.mark.parametrize("name", sorted(SERVING))
def test_serving_commands_use_only_what_the_servers_define(name: str) -> None:
    plan, launch = launch_of(SERVING[name])
    assert plan.fits
    assert "vllm" in launch or "sglang" in launch
    for config in launch.values():
        assert check(config) == [], f"{name} / {config.tool}: {config.text}"


def _value(argv: tuple[str, ...], flag: str) -> str | None:
    return argv[argv.index(flag) + 1] if flag in argv else None


@pytest.mark.parametrize("name", sorted(TRAINING))
def test_the_batch_arithmetic_adds_up_in_every_config(name: str) -> None:
    plan, launch = launch_of(TRAINING[name])
    lay = launched_layout(TRAINING[name], plan)
    assert lay.micro_batch * lay.grad_accum * lay.dp == lay.global_batch
    if "deepspeed" in launch:
        ds: dict[str, Any] = launch["deepspeed"].config or {}
        assert ds["train_batch_size"] == ds["train_micro_batch_size_per_gpu"] * \
            ds["gradient_accumulation_steps"] * lay.dp == lay.global_batch
        assert ds["zero_optimization"]["stage"] == lay.zero_stage
    if "megatron" in launch:
        argv = launch["megatron"].argv
        sizes = [int(_value(argv, f"--{k}-parallel-size") or 1)
                 for k in ("tensor-model", "pipeline-model", "context")]
        assert sizes == [lay.tp, lay.pp, lay.cp]
        assert int(_value(argv, "--micro-batch-size") or 0) == lay.micro_batch
        assert int(_value(argv, "--global-batch-size") or 0) == lay.global_batch
    if "torchtitan" in launch:
        toml = tomllib.loads(launch["torchtitan"].text)
        par, train = toml["parallelism"], toml["training"]
        dp = par["data_parallel_shard_degree"] * par["data_parallel_replicate_degree"]
        assert dp * par["tensor_parallel_degree"] * par["context_parallel_degree"] == lay.gpus
        assert train["global_batch_size"] % (train["local_batch_size"] * dp) == 0
        assert train["global_batch_size"] == lay.global_batch
    for key in ("accelerate", "torchrun"):
        if key in launch and "train.py" in launch[key].argv:
            argv = launch[key].argv
            micro = int(_value(argv, "--per_device_train_batch_size") or 0)
            accum = int(_value(argv, "--gradient_accumulation_steps") or 0)
            assert micro * accum * lay.dp == lay.global_batch
    if "accelerate" in launch:
        config = yaml.safe_load(launch["accelerate"].text)
        assert config["num_processes"] == lay.gpus and config["num_machines"] == lay.nodes


MOE_MODELS = ("deepseek-v3",)  # data-parallel ranks of an MoE are not independent servers


@pytest.mark.parametrize("name", sorted(SERVING))
def test_serving_commands_agree_with_the_plan(name: str) -> None:
    plan, launch = launch_of(SERVING[name])
    fit = plan.serving
    assert fit is not None
    if "vllm" in launch:
        argv = launch["vllm"].argv
        assert int(_value(argv, "--tensor-parallel-size") or 0) == fit.tp
        assert int(_value(argv, "--pipeline-parallel-size") or 1) == fit.pp
        assert int(_value(argv, "--max-model-len") or 0) == fit.context
        assert int(_value(argv, "--max-num-seqs") or 0) == fit.per_replica
        # replicas in one node: one server with --data-parallel-size; across nodes, one per
        # replica; DP attention with expert parallelism: one server over all the ranks
        one_server = fit.expert_parallel or (
            fit.nodes == 1 and SERVING[name].model not in MOE_MODELS)
        assert int(_value(argv, "--data-parallel-size") or 1) == (fit.replicas if one_server
                                                                  else 1)
        assert ("--enable-expert-parallel" in argv) == fit.expert_parallel
    if "sglang" in launch:
        argv = launch["sglang"].argv
        if fit.expert_parallel:  # SGLang: attention DP groups inside one TP group of all GPUs
            assert int(_value(argv, "--tp-size") or 0) == fit.gpus
            assert int(_value(argv, "--attn-dp-size") or 0) == fit.replicas
            running = int(_value(argv, "--max-running-requests") or 0)
            assert running == fit.per_replica * fit.replicas  # the server's cap, split by rank
            return
        assert int(_value(argv, "--tp-size") or 0) == fit.tp
        assert int(_value(argv, "--context-length") or 0) == fit.context
        # SGLang's static share is the weights and the KV pool only: below vLLM's budget
        static = float(_value(argv, "--mem-fraction-static") or 0)
        gpu = plan.gpu
        assert static < fit.memory_fraction
        assert static <= (fit.weights_bytes + fit.kv_budget_bytes) / gpu.memory_bytes_usable
        one_server = fit.nodes == 1 and SERVING[name].model not in MOE_MODELS
        assert int(_value(argv, "--dp-size") or 1) == (fit.replicas if one_server else 1)


def test_each_stack_gets_its_own_configs() -> None:
    assert set(launch_of(TRAINING["deepspeed zero-3"])[1]) == {"deepspeed", "accelerate",
                                                                "torchrun"}
    assert set(launch_of(TRAINING["megatron 405b pp"])[1]) == {"megatron", "torchrun"}
    assert set(launch_of(TRAINING["fsdp torchtitan"])[1]) == {"accelerate", "torchtitan",
                                                              "torchrun"}
    # Qwen2.5 is not one of torchtitan's models: accelerate's FSDP2 + TP only
    assert set(launch_of(TRAINING["fsdp accelerate tp"])[1]) == {"accelerate"}
    assert next(iter(launch_of(SERVING["sglang"])[1])) == "sglang"


def test_offload_reaches_the_deepspeed_config() -> None:
    _, launch = launch_of(TRAINING["zero-infinity"])
    zero = (launch["deepspeed"].config or {})["zero_optimization"]
    assert zero["offload_optimizer"]["device"] == zero["offload_param"]["device"] == "cpu"
    assert (launch["deepspeed"].config or {})["optimizer"]["type"] == "AdamW"


def test_fsdp_qlora_is_planned_without_tensor_parallelism() -> None:
    plan, launch = launch_of(TRAINING["fsdp-qlora"])
    assert plan.layout is not None and plan.layout.tp == 1 and plan.layout.zero_stage == 3
    assert plan.stack == "hf"
    config = yaml.safe_load(launch["accelerate"].text)
    assert config["distributed_type"] == "FSDP"


def test_a_model_with_its_own_code_is_served_with_trust_remote_code() -> None:
    """Kimi-K2's repo ships its modelling code (model_type kimi_k2): both servers need the flag;
    a model transformers knows does not get it."""
    _, launch = launch_of(R(model="kimi-k2", task="infer", quantization="fp8", seq_len=32768,
                            gpu="b200-180gb", gpu_count=8))
    assert all("--trust-remote-code" in launch[tool].argv for tool in ("vllm", "sglang"))
    _, plain = launch_of(R(model="llama-3.1-8b", task="infer", gpu="h100-80gb", gpu_count=1))
    assert "--trust-remote-code" not in plain["vllm"].argv


def test_serving_loads_the_chat_checkpoint_and_training_the_base() -> None:
    """People serve the Instruct model and fine-tune from the base; fp8 serving loads the
    published FP8 checkpoint rather than quantizing the 16-bit one online."""
    _, served = launch_of(R(model="llama-3.1-70b", task="infer", gpu="h100-80gb", gpu_count=4))
    assert "meta-llama/Llama-3.1-70B-Instruct" in served["vllm"].argv
    _, fp8 = launch_of(R(model="llama-4-maverick", task="infer", quantization="fp8",
                         gpu="h200-141gb", gpu_count=8))
    assert "meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8" in fp8["vllm"].argv
    _, fp8 = launch_of(R(model="llama-3.1-405b", task="infer", quantization="fp8",
                         gpu="h200-141gb", gpu_count=8))
    # every linear in fp8, as sized: RedHatAI's checkpoint (Meta's keeps attention in bf16)
    assert "RedHatAI/Meta-Llama-3.1-405B-Instruct-FP8" in fp8["vllm"].argv
    _, trained = launch_of(R(model="llama-3.1-8b", task="finetune", gpu="h100-80gb",
                             gpu_count=8))
    assert not any("Instruct" in w for config in trained.values() for w in config.argv)


def test_a_stated_layout_that_fits_is_the_one_launched() -> None:
    """On given GPUs where the request's own layout fits, the answer shows it and the configs
    run it (they ran the planner's CP=2 layout instead)."""
    answer = compute_answer(R(model="llama-3.1-70b", seq_len=8192, global_batch=1024,
                              gpu="h100-80gb", gpu_count=64, framework="megatron", tp=8, pp=4,
                              zero_stage=1)).answer
    assert answer.fits and answer.plan.dp == 2
    argv = answer.launch["megatron"].argv
    assert _value(argv, "--tensor-model-parallel-size") == "8"
    assert _value(argv, "--pipeline-model-parallel-size") == "4"
    assert _value(argv, "--context-parallel-size") in (None, "1")
    assert _value(argv, "--global-batch-size") == "1024"


def test_megatron_with_tensor_parallelism_sets_cuda_device_max_connections() -> None:
    """Megatron-LM's validate_args asserts CUDA_DEVICE_MAX_CONNECTIONS=1 with TP or CP before
    Blackwell: the launch line sets it."""
    answer = compute_answer(R(model="llama-3.1-70b", seq_len=8192, global_batch=1024,
                              gpu="h100-80gb", gpu_count=64, framework="megatron", tp=8, pp=4,
                              zero_stage=1)).answer
    line = answer.launch["torchrun"].text
    assert line.startswith("CUDA_DEVICE_MAX_CONNECTIONS=1 torchrun")
    assert answer.launch["torchrun"].argv[0] == "torchrun"


def test_awq_and_gptq_serve_on_marlin_kernels_where_they_run() -> None:
    """An explicit --quantization awq makes vLLM force its legacy kernel; awq_marlin keeps the
    fast one on Ampere and later, and a T4 (no Marlin) keeps awq."""
    _, ada = launch_of(R(model="llama-3.1-70b", task="infer", quantization="awq",
                         gpu="rtx4090-24gb", gpu_count=2, seq_len=4096))
    assert _value(ada["vllm"].argv, "--quantization") == "awq_marlin"
    _, turing = launch_of(R(model="llama-3.1-8b", task="infer", quantization="gptq",
                            gpu="t4-16gb", gpu_count=1, seq_len=4096))
    assert _value(turing["vllm"].argv, "--quantization") == "gptq"


def test_a_plan_that_does_not_fit_has_no_launch_config() -> None:
    request = R(model="llama-3.1-70b", seq_len=8192, global_batch=512, gpu="h100-80gb",
                gpu_count=8)
    assert compute_answer(request).answer.launch == {}


def test_the_checks_catch_a_misspelled_key_and_flag() -> None:
    _, launch = launch_of(TRAINING["deepspeed zero-3"])
    ds = launch["deepspeed"]
    bad = dict(ds.config or {}, zero_optimisation={"stage": 3})
    assert check_deepspeed(bad) == ["ds_config.zero_optimisation: unknown key"]
    wrong_stage = dict(ds.config or {}, zero_optimization={"stage": 4})
    assert check_deepspeed(wrong_stage)
    torchrun = launch["torchrun"]
    assert check(replace(torchrun, argv=tuple(a.replace("--nproc-per-node", "--nprocs")
                                              for a in torchrun.argv)))
    _, serving = launch_of(SERVING["vllm 70b"])
    vllm = serving["vllm"]
    assert check(replace(vllm, argv=(*vllm.argv, "--tp", "4")))
    assert check(replace(vllm, argv=(*vllm.argv, "--kv-cache-dtype", "fp9")))


def test_the_tool_definitions_say_where_they_come_from() -> None:
    for name in ("deepspeed", "accelerate", "torchrun", "megatron_lm", "torchtitan", "vllm",
                 "sglang", "transformers_training_arguments"):
        data = tool(name)
        assert data["version"] and data["source"] and data["extracted"]


def test_a_server_without_a_stated_concurrency_is_capped_at_its_room_not_at_one() -> None:
    """No users given: vLLM's --max-num-seqs and SGLang's --max-running-requests are the KV
    cache's room at the full context (a cap of 1 would serve one request at a time); a stated
    concurrency is the cap."""
    plan, launch = launch_of(R(model="llama-3.1-70b", task="infer", quantization="fp8",
                               seq_len=8192, gpu="h100-80gb", gpu_count=4))
    assert plan.serving is not None
    room = plan.serving.max_concurrent // plan.serving.replicas  # each replica's own cap
    assert plan.serving.max_concurrent > 50
    assert _value(launch["vllm"].argv, "--max-num-seqs") == str(room)
    assert _value(launch["sglang"].argv, "--max-running-requests") == str(room)
    fit, stated = launch_of(R(model="llama-3.1-70b", task="infer", quantization="fp8",
                              seq_len=8192, gpu="h100-80gb", gpu_count=4, concurrent=20))
    assert fit.serving is not None  # each replica caps its share of the 20
    assert _value(stated["vllm"].argv, "--max-num-seqs") == str(-(-20 // fit.serving.replicas))


def test_a_preference_objective_runs_on_trl_not_megatron() -> None:
    """Megatron-LM's pretrain_gpt.py has no DPO loss or reference model: an unstated stack for
    DPO is the Trainer (TRL) with data parallelism; a stated Megatron stands (NeMo-RL)."""
    answer = compute_answer(R(model="llama-3.1-8b", task="finetune", finetune_method="full",
                              objective="dpo", seq_len=4096, gpu="h100-80gb",
                              gpu_count=8)).answer
    assert answer.planner is not None and answer.planner.stack == "hf"
    assert answer.planner.layout is not None
    assert answer.planner.layout.plan.tp == answer.planner.layout.plan.pp == 1
    assert "megatron" not in answer.launch


def test_an_8_bit_optimizer_is_planned_on_deepspeed_not_megatron_torchtitan_or_fsdp2() -> None:
    """Megatron-LM and torchtitan build their own 32-bit Adam, and bitsandbytes cannot step
    FSDP2's sharded parameters: a bitsandbytes 8-bit AdamW (no stated framework) runs on
    DeepSpeed ZeRO, data parallel, and only its configs are given."""
    answer = compute_answer(R(model="llama-3.1-70b", task="train", seq_len=4096,
                              optimizer="adamw_8bit", gpu="h100-80gb", gpu_count=16)).answer
    assert answer.planner is not None and answer.planner.stack == "deepspeed"
    assert not {"megatron", "torchtitan"} & set(answer.launch)


def test_sharded_qlora_configs_say_to_store_the_4_bit_base_in_bf16() -> None:
    """FSDP/ZeRO-3 shard parameters of one float dtype: QLoRA over several GPUs needs
    bnb_4bit_quant_storage=bfloat16, or every GPU holds the whole 4-bit base."""
    _, launch = launch_of(R(model="qwen2.5-72b", task="finetune", finetune_method="qlora",
                            gpu="l40s-48gb", gpu_count=4))
    assert launch and all(any("bnb_4bit_quant_storage" in n for n in c.notes)
                          for c in launch.values())


@pytest.mark.parametrize(("layers", "pp"), [(56, 20), (56, 30), (80, 3), (61, 2), (7, 6), (126, 16)])
def test_uneven_pipeline_stages_hold_every_layer_and_no_more_than_the_planner_counted(
        layers: int, pp: int) -> None:
    args = uneven_stage_args(layers, pp)
    most = -(-layers // pp)
    if args[0] == "--pipeline-model-parallel-layout":
        stages = args[1].replace("E", "").replace("L", "").split("|")
        counts = [len(stage) for stage in stages]
    else:
        first, last = int(args[1]), int(args[3])
        middle = (layers - first - last) // (pp - 2) if pp > 2 else 0
        assert pp == 2 or (layers - first - last) % (pp - 2) == 0
        counts = [first, *([middle] * (pp - 2)), last]
    assert len(counts) == pp and sum(counts) == layers
    assert min(counts) >= 1 and max(counts) <= most


def test_fp8_training_configs_turn_fp8_on_not_just_bf16() -> None:
    launch = launch_of(TRAINING["fp8 torchtitan"])[1]
    titan = tomllib.loads(launch["torchtitan"].text)
    assert titan["model"]["converters"] == ["quantize.linear.float8"]
    assert titan["compile"]["enable"] is True
    megatron = launch_of(TRAINING["fp8 megatron"])[1]["megatron"].argv
    assert megatron[megatron.index("--fp8-format") + 1] == "hybrid"


def test_megatron_on_amd_gpus_points_at_rocms_build() -> None:
    """GLM-4.5-Air on MI300X (review 14): upstream Megatron-LM's fused kernels are CUDA's; the
    notes name AMD's ROCm fork. On H100s they do not."""
    amd = compute_answer(EstimateRequest(model="glm-4.5-air", gpu="mi300x-192gb")).answer
    assert any("ROCm/Megatron-LM" in n for n in amd.launch["megatron"].notes)
    nvidia = compute_answer(EstimateRequest(model="glm-4.5-air", gpu="h100-80gb")).answer
    assert not any("ROCm" in n for n in nvidia.launch["megatron"].notes)


def test_megatron_moe_configs_name_their_dense_layers_and_all_to_all_dispatch() -> None:
    """Review 22: DeepSeek-V3's first 3 layers are dense (--moe-layer-freq), expert parallelism
    dispatches all-to-all, and the rope note names Llama 3's base only for Llama 3."""
    _, launch = launch_of(R(model="deepseek-v3", pp=16, ep=64, seq_len=4096,
                            gpu="h800-80gb", gpu_count=2048))
    argv = launch["megatron"].argv
    assert _value(argv, "--moe-layer-freq") == "[0]*3+[1]*58"
    assert _value(argv, "--moe-token-dispatcher-type") == "alltoall"
    assert not any("500000" in note for note in launch["megatron"].notes)
