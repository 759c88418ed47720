"""A pasted serving command that names no context length serves the model's own (review 28:
`vllm serve openai/gpt-oss-120b ...` with no --max-model-len had been sized at 4,096 tokens,
"86 concurrent", for a server that vLLM starts at 131,072 tokens and that failed to start)."""

from __future__ import annotations

from ask_support import ask


def test_a_vllm_serve_line_without_max_model_len_is_the_models_context() -> None:
    found = ask("vllm serve openai/gpt-oss-120b --gpu-memory-utilization 0.95 on one H100 80GB")
    assert found.parsed["seq_len"] == 131072
    assert "no context length in the command: vLLM serves the model's own, 131,072 tokens" \
        in found.reply
    record = next(a for a in found.answer.assumptions if a.field == "seq_len") \
        if found.answer is not None else None
    assert record is not None and record.origin == "default"


def test_a_stated_max_model_len_stays() -> None:
    found = ask("vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192 on one L4")
    assert found.parsed["seq_len"] == 8192


def test_prose_without_a_command_keeps_the_usual_default() -> None:
    assert "seq_len" not in ask("can we serve gpt-oss-120b with vllm on one h100?").parsed


def test_the_engine_named_in_prose_is_not_a_pasted_command() -> None:
    assert "seq_len" not in ask("can we vllm serve Gemma 2 9B on 16 L40S with TP8?").parsed
    assert "seq_len" not in ask("need to vllm serve Qwen/Qwen2.5-7B / 50 concurrent streams / "
                                "a100 40gb x16 thx").parsed
