"""The Hugging Face Trainer's training states follow the backend its accelerate config launches
(``training_stack.trainer_backend``): DeepSpeed for ZeRO-1 and offload, FSDP2 for ZeRO-2/3,
plain DDP with autocast over fp32 parameters otherwise. Found in review: a DPO plan on 8x A100 at
ZeRO-2 had been sized with fp32 weights unsharded on every GPU (4 B/param) while its config
ran FSDP2 SHARD_GRAD_OP (fp32 shards + the 16-bit parameters gathered: 0.5 + 2 B/param)."""

from __future__ import annotations

import pytest
import yaml

from service.core.job.request import EstimateRequest
from service.core.job.resolve import resolve
from service.core.memory.job_memory import estimate

STATES = ("weights", "gradients", "optimizer")


def _states(framework: str, zero_stage: int, offload: str = "none") -> dict[str, int]:
    request = EstimateRequest(model="llama-3-8b", task="finetune", framework=framework,
                              zero_stage=zero_stage, offload=offload, seq_len=2048,
                              gpu="a100-80gb", gpu_count=8)
    found = estimate(resolve(request).job)
    return {name: found.component_bytes(name) for name in STATES}


@pytest.mark.parametrize(("zero_stage", "offload", "backend"), [
    (1, "none", "deepspeed"), (2, "none", "fsdp"), (3, "none", "fsdp"),
    (2, "optimizer", "deepspeed"),
])
def test_the_trainers_states_are_its_backends(zero_stage: int, offload: str,
                                              backend: str) -> None:
    assert _states("hf", zero_stage, offload) == _states(backend, zero_stage, offload)


def test_plain_data_parallel_keeps_fp32_parameters_under_autocast() -> None:
    request = EstimateRequest(model="llama-3-8b", task="finetune", framework="hf", seq_len=2048,
                              gpu="a100-80gb", gpu_count=8)
    held = next(c for c in estimate(resolve(request).job).components if c.key == "weights")
    assert held.term_map["bytes_per_param"] == 4 and held.term_map["shards"] == 1


def test_zero_2_is_fsdp_shards_plus_the_gathered_16_bit_parameters() -> None:
    params = 8_030_261_248
    assert _states("hf", 2)["weights"] == params * 4 // 8 + params * 2


def test_the_launch_config_runs_what_the_memory_describes() -> None:
    from ask_support import ask

    found = ask("DPO on llama 3 8b with full finetune on 8x a100 80gb, give me the accelerate "
                "config")
    assert found.answer is not None and found.answer.planner is not None
    layout = found.answer.planner.layout
    assert layout is not None and layout.plan.zero_stage == 2
    config = yaml.safe_load(found.reply.split("```")[1].split("\n\n")[0])
    assert config["distributed_type"] == "FSDP"
    assert config["fsdp_config"]["fsdp_reshard_after_forward"] is False
    assert any("FSDP2" in f.source for f in layout.formulas if f.component == "weights")
