"""Speculative decoding with a draft model (held-out set 28: "llama 3.2 1b draft for llama 3.1
70b target" had been sized as the 1B model, and the 70B was gone): the target is the model
served, and the draft's weights and KV cache are said apart, at the target's tensor
parallelism."""

from __future__ import annotations

import pytest
from ask_support import ask

from service.parser.parse import parse


@pytest.mark.parametrize("text", [
    "speculative decoding w/ llama 3.2 1b draft for llama 3.1 70b target on 4x a100 80gb. how "
    "much extra mem does the draft eat",
    "serve llama 3.1 70b on 4 a100 80gb using llama 3.2 1b as the speculative draft model",
])
def test_the_target_is_served_and_the_draft_is_set_apart(text: str) -> None:
    parsed = parse(text)
    assert (parsed.merged["model"], parsed.draft) == ("llama-3.1-70b", "llama-3.2-1b")
    assert not any("spec" in i or "draft" in i for i in parsed.ignored)


def test_the_drafts_cost_is_its_weights_and_kv_at_the_targets_tp() -> None:
    reply = ask("speculative decoding w/ llama 3.2 1b draft for llama 3.1 70b target on 4x a100 "
                "80gb. how much extra mem does the draft eat").reply
    assert reply.startswith("*Serves llama-3.1-70b")
    # Llama 3.2 1B: 2.47 GB of bf16 weights / 4; KV 2 x 16 layers x 8 heads x 64 x 2 B / 4
    assert "at the target's TP=4 (vLLM's default draft_tensor_parallel_size) it adds 0.6 GB of " \
        "weights per GPU and 8.2 KB of KV cache per token per GPU, 10% of the target's 81.9 KB" \
        in reply


def test_two_models_without_a_draft_are_still_compared() -> None:
    assert parse("llama 8b vs 70b on h100").draft is None


def test_a_labelled_draft_is_the_model_after_the_label() -> None:
    parsed = parse("speculative decoding for llama 3.1 70b (draft: llama 3.2 1b) on 4 h100")
    assert (parsed.merged["model"], parsed.draft) == ("llama-3.1-70b", "llama-3.2-1b")
