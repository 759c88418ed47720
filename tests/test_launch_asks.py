"""Launch configs asked in the words people use (held-out set 28: "need a deepspeed zero3 json
...", "torchrun cmd for 2 nodes x 8 gpus ... please", "accelerate config for fsdp on 8 gpus"
all came back without a config), and given without a GPU type: a launcher's flags depend on
the layout, not on the GPU's memory, so the stated layout is laid out and said to be unchecked."""

from __future__ import annotations

import json

import pytest
from ask_support import ask

from service.parser.assemble import launch_asked


@pytest.mark.parametrize(("text", "tool"), [
    ("need a deepspeed zero3 json for full FT of llama-3.1-8b on 4x a100 80gb", "deepspeed"),
    ("can you paste the ds_config.json for that", "deepspeed"),
    ("torchrun cmd for 2 nodes x 8 gpus fsdp training please, qwen2.5 14b", "torchrun"),
    ("accelerate config for fsdp on 8 gpus, llama 3.1 8b full ft, seq 2048", "accelerate"),
    ("give me the sglang launch command", "sglang"),
    ("and the vllm command?", "vllm"),
    ("how do i launch it", ""),
])
def test_a_config_asked_for_is_read(text: str, tool: str) -> None:
    assert launch_asked(text.lower()) == tool


@pytest.mark.parametrize("text", [
    'here\'s my ds_config: {"zero_optimization": {"stage": 3}} llama 8b on 8 a100',
    "vllm serve meta-llama/Llama-3.1-8B --max-model-len 8192",
    "our config has zero 3 and mbs 4, llama 8b on 8 a100s",
])
def test_a_pasted_or_mentioned_config_is_not_a_request(text: str) -> None:
    assert launch_asked(text.lower()) is None


def test_the_deepspeed_json_asked_with_the_job_is_the_jobs() -> None:
    reply = ask("need a deepspeed zero3 json for full FT of llama-3.1-8b on 4x a100 80gb, "
                "seq 4096, global batch 64").reply
    config = json.loads(reply.split("```")[1])
    assert config["zero_optimization"]["stage"] == 3
    assert config["train_batch_size"] == 64 and config["gradient_accumulation_steps"] == 16


def test_without_a_gpu_type_the_stated_layout_is_launched_and_said_unchecked() -> None:
    reply = ask("accelerate config for fsdp on 8 gpus, llama 3.1 8b full ft, seq 2048").reply
    assert "distributed_type: FSDP" in reply and "num_processes: 8" in reply
    assert "no GPU type named: this is the layout as stated, not checked against any GPU's " \
        "memory" in reply


def test_a_tool_the_plan_has_no_config_for_gets_the_plans_own_said_so() -> None:
    reply = ask("torchrun cmd for 2 nodes x 8 gpus fsdp training please, qwen2.5 14b, "
                "seq 4096").reply
    assert "No torchrun config for this plan; its accelerate one:" in reply
    assert "num_machines: 2" in reply and "--machine_rank $NODE_RANK" in reply


def test_a_setup_described_before_a_fit_question_is_not_a_config_request() -> None:
    assert launch_asked("deepspeed config with zero3 and cpu offload for llama 70b on 8x a100, "
                        "will it fit?") is None
    assert launch_asked("json for a 70b lora on 8 h100 - does it fit?") is None


def test_a_bitsandbytes_optimizer_under_zero_is_allowed_in_the_deepspeed_config() -> None:
    """Set 29: the ZeRO-3 config for an 8-bit AdamW fix had no optimizer setting; DeepSpeed
    refuses a client optimizer under ZeRO unless zero_allow_untested_optimizer is set."""
    reply = ask("give me the deepspeed config for falcon-40b full finetune on 16x a100 40gb, zero 3, "
                "8-bit adam, seq 2048, gradient checkpointing").reply
    config = json.loads(reply.split("```")[1])
    assert config["zero_allow_untested_optimizer"] is True
    assert "--optim adamw_8bit" in reply
