"""Published checkpoints of another model's architecture are models of their own (held-out set
28): DeepSeek-R1 is served from its own repo (the SGLang command had launched DeepSeek-V3), its
FP8 weights are the checkpoint's own (no --quantization fp8, which SGLang's DeepSeek docs warn
against), and Yi-34B-200K is trained for 200K tokens (it had been Yi-34B, warned to need YaRN)."""

from __future__ import annotations

from ask_support import ask

from service.core.model.presets import find_preset


def test_r1_is_launched_from_its_own_repo_without_a_quantization_flag() -> None:
    reply = ask("serve deepseek-r1 (the full 671b one) on 8x h200, fp8, 32k ctx, give me the "
                "sglang launch command").reply
    assert "--model-path deepseek-ai/DeepSeek-R1 " in reply
    assert "--quantization" not in reply.split("```")[1]
    assert "no --quantization: the checkpoint's weights are fp8-block already" in reply


def test_r1_has_v3s_architecture_and_counts() -> None:
    r1, v3 = find_preset("deepseek-r1"), find_preset("deepseek-v3")
    assert r1.arch.layers == v3.arch.layers and r1.arch.moe == v3.arch.moe
    assert (r1.published_params, r1.weight_format) == (v3.published_params, v3.weight_format)
    assert r1.hf_repo == "deepseek-ai/DeepSeek-R1"


def test_the_200k_checkpoint_is_not_warned_about_its_context() -> None:
    reply = ask("yi-34b-200k how much for 200k ctx single request? int8 weights").reply
    assert reply.startswith("*yi-34b-200k needs 87.2 GB per GPU")
    assert "YaRN" not in reply and "trained for 4,096" not in reply


def test_metas_405b_fp8_keeps_attention_and_the_end_layers_in_bf16() -> None:
    """Review 28: Meta's FP8 checkpoint quantizes only the feed-forward linears (not the first
    and last layers'); vLLM logs 57.75 GiB of weights per GPU at TP=8 (vllm#6746), where
    every linear in fp8 had given 47.7."""
    found = ask("serve meta-llama/Llama-3.1-405B-Instruct-FP8 on 8x h100 at 8k, vllm command?")
    assert found.answer is not None
    weights = found.answer.per_gpu_bytes.weights / 2**30
    assert abs(weights / 57.752 - 1) < 0.03
    assert "vllm serve meta-llama/Llama-3.1-405B-Instruct-FP8 " in found.reply
    assert "--quantization" not in found.reply.split("```")[1]


def test_405b_in_fp8_otherwise_loads_a_checkpoint_with_every_linear_in_fp8() -> None:
    """The memory of fp8 on every layer linear is that of RedHatAI's checkpoint, which the
    command then loads (Meta's would not fit the figures)."""
    reply = ask("serve llama 3.1 405b fp8 on 8x h100, 8k ctx, give me the vllm command").reply
    assert "vllm serve RedHatAI/Meta-Llama-3.1-405B-Instruct-FP8 " in reply


def test_the_feed_forward_fp8_layout_is_refused_for_moe_models() -> None:
    import pytest

    from service.core.errors import InvalidInput
    from service.core.job.request import EstimateRequest
    from service.core.job.resolve import resolve

    with pytest.raises(InvalidInput, match="fp8-ffn is the layout of dense checkpoints"):
        resolve(EstimateRequest(model="mixtral-8x7b", task="infer", quantization="fp8-ffn",
                                gpu="h100-80gb"))
