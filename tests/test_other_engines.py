"""Serving engines fitcheck does not model on their own are said, never silently replaced
(held-out sets 27 and 28: TGI and TensorRT-LLM questions had been answered as vLLM without a
word): both reserve their KV cache from a share of memory, so they are sized as vLLM is and the
reply says where they differ."""

from __future__ import annotations

import pytest
from ask_support import ask


@pytest.mark.parametrize(("text", "said"), [
    ("phi 3.5 mini on an L4 with TGI, 16k context, how many users",
     "TGI sized as a vLLM-style server"),
    ("Mixtral 8x7B instruct, TensorRT-LLM, int4 awq weights, fp8 kv, on 1x A100 80GB - how many "
     "concurrent 8k requests can we push?", "TensorRT-LLM sized as a vLLM-style server"),
    ("trtllm-build for mixtral 8x7b on 1x h100", "TensorRT-LLM sized as a vLLM-style server"),
])
def test_an_engine_sized_as_vllm_is_said(text: str, said: str) -> None:
    found = ask(text)
    assert found.answer is not None and found.answer.task == "infer"
    assert said in found.reply


def test_a_request_rate_or_latency_target_is_said_to_be_beyond_the_memory_floor() -> None:
    """Set 29: "p95 latency < 2s for first token, 50 rps. how many L40S?" had been answered
    with two GPUs for one sequence and "I did not use: 50 rps" at the end."""
    lines = ask("*urgent* need to serve qwen2.5-72b-instruct awq int4, p95 latency < 2s for "
                "first token, 50 rps. how many L40S?").reply.splitlines()
    assert lines[0].endswith("(memory only)*")
    assert lines[1].startswith("Throughput and latency (latency, 50 rps) are not modelled")


def test_grpo_with_vllm_colocated_says_what_the_policy_step_has_left() -> None:
    """Set 29: "GRPO ... using vllm colocate. 8x h100. will it fit or do i need separate vllm
    node" had been answered for the policy alone: TRL's colocated vLLM takes 0.3 of each GPU."""
    reply = ask("GRPO on qwen2.5-7b-instruct with trl, num_generations=8, max_completion_length "
                "1024, using vllm colocate. 8x h100. will it fit or do i need separate vllm node").reply
    assert "With TRL's vLLM colocated (vllm_mode='colocate', vllm_gpu_memory_utilization 0.3 by " \
        "default) the policy step has 59.5 GB of each GPU for its 40.1 GB, which holds it" in reply
