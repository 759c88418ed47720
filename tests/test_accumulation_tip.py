"""A stated micro-batch over on the stated layout gets the engineer's first fix: a smaller
micro-batch with accumulation, same layout, same sequences a step (held-out set 28)."""

from __future__ import annotations

from ask_support import ask


def test_an_oom_at_step_0_is_offered_the_smaller_micro_batch_on_its_own_layout() -> None:
    reply = ask("OOM at step 0 full finetune llama-3-8b on 8x a100 40gb with FSDP full shard, "
                "bf16, seq 8192, mbs 2. gradient checkpointing is ON. what gives").reply
    assert "As written (dp=8 tp=1 pp=1 cp=1, ZeRO-3, recompute full, micro-batch 2 x 1 " \
        "accumulation) would need 55.0 GB per GPU: over." in reply
    assert "Or keep the layout as written with micro-batch 1 x 2 accumulation steps (the same 16 " \
        "sequences a step): " in reply


def test_a_layout_that_fits_as_written_gets_no_tip() -> None:
    reply = ask("full finetune llama-3-8b on 8x a100 80gb, zero 3, seq 2048, mbs 2").reply
    assert "Or keep the layout as written" not in reply
