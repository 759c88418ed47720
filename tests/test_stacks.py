"""No plan uses what its stack cannot run, over a grid of jobs people ask for."""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest
from engine_support import plan_of

from service.answers import compute_answer
from service.core.errors import InvalidInput
from service.core.job.request import EstimateRequest
from service.core.job.resolve import resolve
from service.core.planning.plan_types import Plan
from service.core.planning.stacks import STACKS, torchtitan_models

MODELS = ("llama-3.1-8b", "qwen2.5-32b", "llama-3.1-70b", "mixtral-8x7b", "qwen3-30b-a3b")
GPUS = ("a100-40gb", "h100-80gb", "l40s-48gb")
SHAPES = (
    {},
    {"framework": "deepspeed"},
    {"framework": "megatron"},
    {"framework": "fsdp"},
    {"framework": "hf"},
    {"zero_stage": 3},
    {"task": "finetune", "finetune_method": "lora"},
    {"task": "finetune", "finetune_method": "qlora"},
)
GRID = [(m, g, s) for m, g, s in itertools.product(MODELS, GPUS, SHAPES)]


def violations(plan: Plan, finetune_method: str) -> list[str]:
    lay = plan.layout
    if lay is None or not plan.fits:
        return []
    stack = STACKS[plan.stack]
    out: list[str] = []
    if (lay.tp > 1 and not stack.tp) or (lay.pp > 1 and not stack.pp) or (lay.cp > 1 and not stack.cp):
        out.append(f"{stack.name} cannot run {lay.shape()}")
    if lay.zero_stage not in stack.zero_stages:
        out.append(f"{stack.name} has no ZeRO-{lay.zero_stage}")
    if lay.ep > 1 and not (stack.ep and (stack.id != "fsdp" or plan.model_id in torchtitan_models())):
        out.append(f"{stack.name} runs no expert parallelism for {plan.model_id}")
    if lay.offload != "none" and not stack.offload:
        out.append(f"{stack.name} cannot offload")
    if lay.recompute == "selective" and not (stack.selective_recompute and (
            stack.id != "fsdp" or plan.model_id in torchtitan_models())):
        out.append(f"{stack.name} has no selective recompute")
    if finetune_method != "full":
        if not stack.adapters:
            out.append(f"{stack.name} runs no LoRA")
        if lay.tp * lay.pp > 1 or (lay.cp > 1 and finetune_method != "lora"):
            # LoRA may split sequences (accelerate's ParallelismConfig cp_size on FSDP2);
            # bitsandbytes 4-bit has no TP, and adapters have no pipeline schedule
            out.append("adapters with TP/PP, or QLoRA with CP")
    return out


@pytest.mark.parametrize(("model", "gpu", "shape"), GRID,
                         ids=[f"{m}-{g}-{'-'.join(map(str, s.values())) or 'plain'}"
                              for m, g, s in GRID])
def test_no_plan_uses_what_its_stack_cannot_run(model: str, gpu: str,
                                                shape: dict[str, object]) -> None:
    request = EstimateRequest(model=model, gpu=gpu, seq_len=4096, global_batch=256,
                              **shape)  # type: ignore[arg-type]
    plan = plan_of(request)
    assert plan.stack in STACKS or not plan.fits
    assert violations(plan, str(shape.get("finetune_method", "full"))) == []
    if "framework" in shape and plan.fits:
        assert plan.stack == shape["framework"]


@pytest.mark.parametrize("model", ["mixtral-8x7b", "qwen3-30b-a3b"])
def test_expert_parallel_layouts_go_to_stacks_that_run_them(model: str) -> None:
    """An EP layout runs in Megatron-LM, or in torchtitan for the MoE models it ships (Qwen3,
    not Mixtral), never in accelerate or DeepSpeed, whose configs would silently drop EP (and
    then need twice the memory per GPU)."""
    answer = compute_answer(EstimateRequest(model=model, task="finetune", seq_len=4096,
                                            global_batch=64, ep=8, gpu="h100-80gb",
                                            gpu_count=16)).answer
    assert answer.planner is not None and answer.planner.fits
    stack = answer.planner.stack
    assert stack == "megatron" or (stack == "fsdp" and model in torchtitan_models())
    assert "accelerate" not in answer.launch and "deepspeed" not in answer.launch
    text = answer.launch["megatron" if stack == "megatron" else "torchtitan"].text
    assert "--expert-model-parallel-size 8" in text or "expert_parallel_degree = 8" in text


def test_cpu_offload_runs_inside_a_zero_stage() -> None:
    """DeepSpeed builds its CPU Adam only for ZeRO's partitions ("stage": 0 with offload_optimizer
    fails at the first step): offload with no stage said runs ZeRO-2 (ZeRO-Offload), parameter
    offload ZeRO-3, a stated stage 0 is refused by name, and the planner's offload fix on one
    GPU, opened as its own estimate, is ZeRO-2 too."""
    offload = resolve(EstimateRequest(model="llama-3.1-8b", offload="optimizer", gpu="a100-80gb"))
    assert offload.job.parallel.zero_stage == 2
    both = resolve(EstimateRequest(model="llama-3.1-8b", offload="optimizer_and_params"))
    assert both.job.parallel.zero_stage == 3
    with pytest.raises(InvalidInput) as err:
        resolve(EstimateRequest(model="llama-3.1-8b", offload="optimizer", zero_stage=0))
    assert err.value.field == "offload"
    ask = EstimateRequest(model="llama-3.1-8b", task="finetune", finetune_method="full",
                          gpu="a100-80gb", gpu_count=1)
    fix = plan_of(ask).fix
    assert fix is not None and fix.changes.get("offload") == "optimizer"
    opened = resolve(EstimateRequest.from_dict({**ask.stated(), **fix.changes}))
    assert opened.job.parallel.zero_stage >= 1


def test_a_stated_pipeline_with_no_framework_runs_megatrons_distributed_optimizer() -> None:
    """Review 22: Mixtral 8x22B at TP=2 PP=4 EP=8 on 256 H100s had been 'as written' with ZeRO-0
    (101 GB, over) and re-shaped with CP=2; a pipeline runs on Megatron-LM, whose recipes use
    the distributed optimizer, and then the layout fits as written (73 GB)."""
    request = EstimateRequest(model="mixtral-8x22b", seq_len=4096, tp=2, pp=4, ep=8,
                              global_batch=1024, gpu="h100-80gb", gpu_count=256)
    assert resolve(request).job.parallel.zero_stage == 1
    assert resolve(replace(request, zero_stage=0)).job.parallel.zero_stage == 0
    assert resolve(replace(request, pp=None)).job.parallel.zero_stage == 0


def test_contradictory_fields_are_refused_by_name_and_nodes_split_the_count() -> None:
    """Review 24: task train with LoRA, and QLoRA over fp8, had been answered silently as
    something else; 16 GPUs on 4 nodes had been planned on 2 nodes of 8."""
    with pytest.raises(InvalidInput) as err:
        resolve(EstimateRequest(model="llama-3.1-8b", task="train", finetune_method="lora"))
    assert err.value.field == "finetune_method"
    with pytest.raises(InvalidInput) as err:
        resolve(EstimateRequest(model="llama-3.1-8b", finetune_method="qlora", quantization="fp8"))
    assert err.value.field == "quantization"
    split = resolve(EstimateRequest(model="llama-3.1-8b", gpu="h100-80gb", gpu_count=16, nodes=4))
    assert split.gpus_per_node == 4 and split.job.parallel.gpus == 16
