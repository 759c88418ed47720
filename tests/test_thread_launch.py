"""A launch config or a price asked for in a thread ("give me the deepspeed config"), held-out set 27:
where the plan does not fit as asked but its first fix on the same GPUs does, the reply gives
that fix's config and says so (it had refused), with what the config leaves to the trainer;
"mbs 1 with grad accum 2" on the thread's 8 GPUs is a global batch of 16 (it had been 8)."""

from __future__ import annotations

from typing import Any

from ask_support import ask

SHORT: dict[str, Any] = {"finetune_method": "full", "model": "qwen2.5-7b", "gpu_count": 8,
                         "gpu": "a100-40gb", "framework": "deepspeed", "zero_stage": 3,
                         "seq_len": 4096, "micro_batch": 2, "task": "finetune"}


def test_a_config_asked_for_a_plan_that_does_not_fit_is_its_first_fixs() -> None:
    reply = ask("give me the deepspeed config", SHORT).reply
    assert "No launch config" not in reply
    assert "As asked it does not fit; with the fix (micro-batch 1 with accumulation" in reply
    assert '"gradient_accumulation_steps": 2' in reply and '"train_batch_size": 16' in reply
    assert "• activation recompute is the model's: TrainingArguments(gradient_checkpointing=True)" \
        in reply


def test_gradient_accumulation_in_a_follow_up_counts_the_threads_gpus() -> None:
    result = ask("ok use mbs 1 with grad accum 2 then. give me the deepspeed config", SHORT)
    assert result.parsed["global_batch"] == 16
    assert '"train_batch_size": 16' in result.reply and "As asked it does not fit" not in result.reply


SFT: dict[str, Any] = {"framework": "deepspeed", "zero_stage": 2, "finetune_method": "full",
                       "model": "llama-3.1-8b", "gpu_count": 8, "gpu": "h100-80gb",
                       "seq_len": 4096, "task": "finetune"}


def test_a_follow_up_asking_only_for_a_config_gets_the_threads_config() -> None:
    """Set 29: "can you give me the accelerate yaml for that" had been "I couldn't find a
    question about a model or a GPU in that"."""
    result = ask("can you give me the accelerate yaml for that", SFT)
    assert result.intent == "finetune" and "*accelerate config and launch*" in result.reply
    assert "distributed_type: DEEPSPEED" in result.reply


def test_a_follow_up_asking_the_monthly_cost_gets_it() -> None:
    reply = ask("and the cost per month?", SFT).reply
    assert "Cost: 8 GPUs x $2.99/h = *$23.92/h* (catalog on-demand price), ≈$17,462 a month" \
        in reply
