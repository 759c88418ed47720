"""DPO's reference model, asked about in words (held-out set 28: "what if the ref model is
precomputed (no ref model in memory)?" came back unchanged; set 27: "does the reference model
double the memory?" was not answered in words). TRL's precompute_ref_log_probs scores the
dataset with the reference once before training: no reference model during the steps."""

from __future__ import annotations

from typing import Any

from ask_support import ask

from service.core.job.request import EstimateRequest
from service.core.job.resolve import resolve
from service.core.memory.job_memory import estimate
from service.parser.parse import parse

DPO: dict[str, Any] = {"model": "llama-3.1-8b", "objective": "dpo", "finetune_method": "full",
                       "gpu": "h100-80gb", "gpu_count": 4, "seq_len": 4096, "micro_batch": 1,
                       "task": "finetune", "zero_stage": 3}


def _total(**changes: Any) -> int:
    return estimate(resolve(EstimateRequest(**{**DPO, **changes})).job).total_bytes


def test_precomputed_reference_log_probs_drop_the_reference_weights() -> None:
    params = 8_030_261_248
    assert _total() - _total(precompute_ref_log_probs=True) == params * 2 // 4  # bf16 / ZeRO-3


def test_a_follow_up_saying_the_reference_is_precomputed_is_read() -> None:
    found = ask("what if the ref model is precomputed (no ref model in memory)?", DPO)
    assert found.parsed["precompute_ref_log_probs"] is True
    assert "reference model precomputed" in found.reply
    assert "Reference model:" not in found.reply


def test_the_reference_models_share_is_said() -> None:
    reply = ask("DPO on llama 3 8b with full finetune on 8x a100 80gb - does the reference "
                "model double the memory?").reply
    assert "Reference model: 16.1 GB of the " in reply and "so far less than double" in reply


def test_lora_has_no_reference_copy_to_speak_of() -> None:
    assert "Reference model:" not in ask("dpo llama 3 8b lora on one h100").reply


def test_a_negated_precompute_is_not_read() -> None:
    assert "precompute_ref_log_probs" not in parse(
        "dpo llama 8b full on 4 h100 without precomputing the reference log probs").merged
    assert "recompute" not in parse("sft llama 8b on 8 h100, load the ckpt off s3").merged
