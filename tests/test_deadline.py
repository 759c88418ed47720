"""A deadline in a question ("in 7 days", "within two weeks") is answered with the GPUs that
finish the stated tokens in time, checked by the planner and the time estimate on that count;
"for 3 days" or "how many days" are not deadlines."""

from __future__ import annotations

import pytest
from ask_support import ask

from service.asking.deadline_fit import first_count
from service.parser.parse import parse


@pytest.mark.parametrize(("text", "hours"), [
    ("how many h100s to train llama 3.1 8b on 1T tokens in 7 days", 168.0),
    ("pretrain 7b on 2T tokens within two weeks on h100s", 336.0),
    ("train 8b on 1T tokens in under a week", 168.0),
    ("can we finish 70b on 500B tokens by 36 hours on h200", 36.0),
])
def test_deadlines_are_read(text: str, hours: float) -> None:
    assert parse(text).deadline_hours == hours


@pytest.mark.parametrize("text", ["trained for 3 days on 8 h100 a 7b on 1T tokens",
                                  "how many days to train 8b on 1T tokens on 64 h100"])
def test_durations_that_are_not_deadlines(text: str) -> None:
    assert parse(text).deadline_hours is None


def test_first_count_rounds_to_a_power_of_two_in_a_node_or_whole_nodes() -> None:
    assert first_count(10, 24, 8) == 1
    assert first_count(3 * 24, 24, 8) == 4
    assert first_count(229.2 * 168, 168, 8) == 232


def test_the_answer_is_the_fewest_gpus_that_finish_in_time() -> None:
    result = ask("how many h100s to train llama 3.1 8b on 1T tokens in 7 days")
    assert result.reply.startswith("To finish in 7 days: *")
    answer = result.answer
    assert answer is not None and answer.compute is not None and answer.planner is not None
    assert answer.planner.fits and answer.compute.days <= 7
    gpus = answer.compute.gpus
    assert gpus % 8 == 0 and answer.compute.days * gpus / (gpus - 8) > 7  # a node less is late


def test_a_deadline_without_tokens_asks_for_them() -> None:
    reply = ask("train llama 3 8b in 7 days on h100s").reply
    assert "training tokens" in reply


def test_a_stated_count_is_answered_yes_or_no_first() -> None:
    """"Is 4x H100 enough?" is answered on 4 GPUs (and the reply keeps the 4 the user said);
    a count that is too small says how many would do."""
    enough = ask("is 4x H100 enough to pretrain a 1B model on 50B tokens in a week?")
    assert enough.reply.startswith("Yes: 4x") and "GPUs 4" in enough.reply
    short = ask("is 2x H100 enough to pretrain a 7B model on 500B tokens in a week?")
    assert short.reply.startswith("No: 2x") and "To finish in 7 days: *" in short.reply


def test_hardware_had_for_a_while_is_a_deadline_and_the_share_done_is_said() -> None:
    """Set 28: "we have one p5.48xlarge for 2 weeks, can we pretrain a 7B on 200B tokens?" had
    left "2 weeks" unused; the answer is no, what those GPUs get through, and what would."""
    reply = ask("we have one p5.48xlarge for 2 weeks, can we pretrain a 7B on 200B tokens?").reply
    assert reply.startswith("No: 8x NVIDIA H100 80GB SXM take 35.4 days; in 14 days they get "
                            "through ≈79.1B of the 200B tokens. To finish in 14 days: *24x")
    assert parse("train llama 8b for 3 days on 8 h100").deadline_hours is None


@pytest.mark.parametrize("text", [
    "our llama 3 8b full finetune on 8 h100 has been running for 2 days and now OOMs at step "
    "4000, why?",
    "I got OOM after training llama 8b for 3 hours on 8 a100 80gb with zero 2",
])
def test_a_runs_age_is_not_a_deadline(text: str) -> None:
    assert parse(text).deadline_hours is None
