"""Questions for a limit ("what mbs can I push", "biggest micro batch on 8 A100s", "biggest
model on 8 H100s"): the largest that fits, on the layout the user stated when there is one
(held-out set 26: "fsdp full shard + activation checkpointing on 32x H100 - what mbs can i
push" went unanswered, and a planner free to add TP=8 and CP=4 would have answered 32 for a
layout that holds 1)."""

from __future__ import annotations

import pytest
from ask_support import ask

from service.parser.parse import parse


@pytest.mark.parametrize("text", [
    "llama 3.1 70b at 8k on 32x H100, does it fit? what mbs can i push",
    "can we pretrain a 34B with fsdp at 4k seq on 8x MI300X? mbs?",
    "how high can the batch size go for llama 3 8b on one a100",
    "biggest micro batch for llama 3 8b full finetune on 8 a100 80gb",
])
def test_the_largest_micro_batch_is_asked(text: str) -> None:
    assert parse(text).maximize == "micro_batch"


def test_a_stated_layout_keeps_its_shape_while_the_micro_batch_grows() -> None:
    reply = ask("llama 3.1 70b pretrain-style run at 8k ctx, fsdp full shard + activation "
                "checkpointing on 32x H100 - does it fit? what mbs can i push").reply
    assert "Largest micro-batch per GPU that fits with the layout as stated (powers of two): " \
        "*1*; 2 does not." in reply


def test_with_no_layout_stated_the_planner_lays_out_each_micro_batch() -> None:
    reply = ask("biggest micro batch for llama 3 8b full finetune on 8 a100 80gb").reply
    assert "Largest micro-batch per GPU that fits (powers of two): *32*; 64 does not." in reply


def test_the_biggest_model_between_two_rungs_is_the_next_rungs_shape_with_fewer_layers() -> None:
    """Set 26: 8x H100 with ZeRO-3 at 4k answered 14B where 32B is a few GB over: the ladder
    jumps 14B -> 32B. Qwen2.5 32B's shape with fewer layers: 61 of its 64 fit (31.3B)."""
    reply = ask("whats the biggest model I can pretrain on a single node of 8x H100 80GB with "
                "ZeRO-3 at 4k seq?").reply
    assert "*qwen2.5-14b*; qwen2.5-32b does not" in reply
    assert "With qwen2.5-32b's shape and fewer layers, about *31.3B* is the largest that fits " \
        "there." in reply


def test_the_longest_context_leads_the_serving_answer_and_one_step_more_does_not_fit() -> None:
    """'max context' had been answered at the default 4,096 tokens with the limit in a last line
    (≈25,909 from the 4k budget, a figure the activations at that length do not leave room for)."""
    found = ask("what's the max context I can serve llama 3.1 8b at on one L4?")
    assert found.answer is not None
    context = found.answer.plan.context
    assert context is not None and context % 1024 == 0 and context > 16_384
    assert found.reply.startswith(f"*Serves llama-3.1-8b at {context:,} tokens x 1 sequence")
    assert f"Longest context that fits: *{context:,} tokens* for one sequence" in found.reply
    record = next(a for a in found.answer.assumptions if a.field == "seq_len")
    assert record.origin == "derived"
    over = ask(f"serve llama 3.1 8b at {context + 1024} ctx on one L4")
    assert over.answer is not None and over.answer.details["max_concurrent_sequences"] == 0


def test_a_model_whose_whole_trained_context_fits_is_answered_at_that_context() -> None:
    reply = ask("max context for qwen2.5 0.5b on one h100?").reply
    assert reply.startswith("*Serves qwen2.5-0.5b at 32,768 tokens x 1 sequence")
    assert "Longest context: the model's whole trained context, *32,768 tokens*, fits" in reply


def test_no_context_fits_when_the_weights_leave_no_kv_budget() -> None:
    reply = ask("max context for llama 3.1 405b on one h100?").reply
    assert "Longest context that fits: none of at least 1,024 tokens for one sequence (the " \
        "weights and the overhead leave no KV budget on these GPUs)." in reply


def test_a_sliding_window_models_longest_context_is_searched_up_not_only_down() -> None:
    """Review: Gemma 3 27B on one H100 had been answered 38,912 tokens from the 4k answer's KV
    per token, though its window layers hold a fixed window and the whole 131,072 fits."""
    reply = ask("what's the max context I can serve gemma 3 27b at on one h100?").reply
    assert reply.startswith("*Serves gemma-3-27b at 131,072 tokens x 1 sequence")
