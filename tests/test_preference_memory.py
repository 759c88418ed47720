"""Preference objectives change what a step holds (TRL's trainers): DPO and IPO run chosen and
rejected completions as one batch and keep a frozen reference model; ORPO pairs without a
reference; with LoRA the base with the adapters off is the reference, so nothing is copied."""

from __future__ import annotations

import pytest

from service.core.errors import InvalidInput
from service.core.job.request import EstimateRequest
from service.core.job.resolve import resolve
from service.core.memory.activations import activation_breakdown
from service.core.memory.job_memory import estimate
from service.core.memory.model_state import reference_weights

DPO_8B = dict(model="llama-3.1-8b", task="finetune", seq_len=2048, zero_stage=1,
              framework="deepspeed", gpu="a100-80gb", gpu_count=8)


def _job(**fields: object):  # type: ignore[no-untyped-def]
    return resolve(EstimateRequest(**{**DPO_8B, **fields})).job  # type: ignore[arg-type]


def test_dpo_keeps_a_reference_copy_and_twice_the_sequences() -> None:
    sft, dpo = _job(), _job(objective="dpo")
    assert reference_weights(sft).bytes == 0
    # a bf16 copy of 8.03B parameters on every GPU: ZeRO-1 does not shard it
    assert reference_weights(dpo).bytes == 8_030_261_248 * 2
    assert dpo.forward_batch == 2 * sft.forward_batch
    assert activation_breakdown(dpo).per_layer_bytes == 2 * activation_breakdown(sft).per_layer_bytes
    # the reviewer's arithmetic: SFT 64.6 GB, DPO about 97 GB: over an 80 GB card's budget
    assert estimate(sft).total_bytes < 70e9 < 90e9 < estimate(dpo).total_bytes


def test_zero_3_shards_the_reference_and_orpo_has_none() -> None:
    sharded = _job(objective="dpo", zero_stage=3)
    assert reference_weights(sharded).bytes == 8_030_261_248 * 2 // 8
    orpo = _job(objective="orpo")
    assert reference_weights(orpo).bytes == 0 and orpo.forward_batch == 2


def test_lora_dpo_uses_the_base_as_its_reference() -> None:
    lora = _job(objective="dpo", finetune_method="lora", lora_rank=16, zero_stage=0)
    assert reference_weights(lora).bytes == 0 and lora.forward_batch == 2


def test_serving_has_no_training_objective() -> None:
    with pytest.raises(InvalidInput) as info:
        resolve(EstimateRequest(model="llama-3.1-8b", task="infer", objective="dpo"))
    assert info.value.field == "objective"
