"""What a reply sets beside its figures when asked (held-out set 28): memory seen in use, next
to what the answer expects ("~73GB used per GPU on our vllm deployment ... is it leaking?" had
been answered with the model's 19 GB first and the reservation in passing), and the hourly price
of a training layout ("for how much per hour")."""

from __future__ import annotations

import pytest
from ask_support import ask

from service.parser.parse import parse


def test_a_vllm_deployment_near_its_reservation_is_not_leaking() -> None:
    reply = ask("We're seeing ~73GB used per GPU on our 4x H100 vllm deployment of a 34B model "
                "and ppl are freaking out - is it leaking?").reply
    assert reply.startswith("73 GB in use per GPU is expected, not a leak: vLLM takes "
                            "--gpu-memory-utilization (90%) of each GPU's memory at start, "
                            "76.4 GB (71.2 GiB)")
    assert "73GB used" not in reply  # read, not "not used"


def test_training_memory_seen_is_compared_with_the_estimates_band() -> None:
    reply = ask("training llama 3 8b full ft on 8 h100 zero 3 seq 4096 uses 60gb per gpu, is "
                "that normal?").reply
    assert reply.startswith("60 GB in use is within this estimate's likely range")


def test_a_run_as_written_that_cannot_fit_explains_the_oom() -> None:
    reply = ask("full finetune llama 3 8b on 8 h100 with ddp (zero 0), seq 4096, nvidia-smi shows "
                "79gb used then OOM, why?").reply
    assert reply.startswith("79 GB in use, then out of memory, is what the run as written does: "
                            "it needs 168.8 GB per GPU")


@pytest.mark.parametrize(("text", "gpu"), [
    ("llama 8b on a 24gb card", "rtx4090-24gb"),
    ("why does llama 8b OOM when using 40gb a100s?", "a100-40gb"),
    ("what is the expected memory for llama 3 8b lora using 24gb cards", "rtx4090-24gb"),
    ("llama 70b takes 140gb in bf16, why cant I serve it on 2 h100?", "h100-80gb"),
])
def test_a_gpus_size_or_a_models_is_not_a_reading(text: str, gpu: str) -> None:
    parsed = parse(text)
    assert parsed.observed_gb is None and parsed.merged.get("gpu") == gpu


def test_a_reading_is_read() -> None:
    assert parse("nvidia-smi shows 76 GB on each h100 serving llama 70b with vllm, why") \
        .observed_gb == 76.0


def test_a_training_budget_question_per_hour_is_priced() -> None:
    """Held-out set 28: "how many a100 80s and for how much per hour" had no price."""
    reply = ask("budget check for mgmt: we want to finetune llama 3.1 405b with qlora. how many "
                "a100 80s and for how much per hour").reply
    assert "Cost: 8 GPUs x $1.79/h = *$14.32/h* (catalog on-demand price)" in reply


def test_the_cheapest_serving_setup_names_cheaper_weights_on_the_same_gpus() -> None:
    """Set 29: "cheapest setup on h100s" for 70B and 200 users had been 8 H100s in bf16, where
    fp8 weights hold them on 4 for half the price."""
    reply = ask("serving llama 3.1 70b instruct for ~200 concurrent users, avg prompt 2k, outputs "
                "~500. what's the cheapest setup on h100s?").reply
    assert "16-bit weights are what is sized above; cheaper on the same GPU type with fp8 " \
        "weights (near-lossless): 4 GPUs, room for 268 sequences, $11.96/h" in reply


def test_the_kv_cache_per_token_asked_leads_the_reply() -> None:
    reply = ask("what's the kv cache per token for llama 3 70b in fp16").reply
    # 2 x 80 layers x 8 KV heads x 128 x 2 bytes
    assert reply.startswith("KV cache: *327.7 KB per token* for the whole model (llama-3-70b")
