"""A chat reply tells one story: the figures under the verdict are the layout the verdict is
about, and the assumptions do not contradict the layout shown."""

from __future__ import annotations

import re

from ask_support import ask


def _gb(text: str, pattern: str) -> float:
    found = re.search(pattern, text)
    assert found is not None, (pattern, text)
    return float(found.group(1).replace(",", ""))


def test_a_serving_reply_on_given_gpus_shows_the_planners_split() -> None:
    """DeepSeek-V3 on 8 H200s: vLLM's TP=8 replicates the MLA latent cache on every rank, the
    planner runs attention data parallel with the experts split over the ranks; the breakdown,
    the room and the verdict are that split's."""
    reply = ask("serve deepseek v3 on 8x h200 at 32k context, 64 concurrent").reply
    assert reply.startswith("*Serves") and "(DP=8 attention + EP=8)" in reply.splitlines()[0]
    assert "Layout that fits: DP=8 attention + EP=8 on 8 GPUs" in reply
    total = _gb(reply, r"= \*([\d,.]+) GB\*")
    budget = _gb(reply, r"of a ([\d,.]+) GB budget")
    assert total <= budget
    up_to = _gb(reply, r"up to ([\d,]+) concurrent")
    room = _gb(reply, r"room for ([\d,]+) concurrent")
    assert up_to == room
    assert "The default layout (TP=8" in reply and "tensor parallel 8" not in reply


def test_the_assumed_line_does_not_contradict_the_planned_layout() -> None:
    reply = ask("train llama 3.1 70b on 8x mi300x seq 4096").reply
    assert "ZeRO-3" in reply
    assumed = next(line for line in reply.splitlines() if line.startswith("_Assumed:_"))
    assert "ZeRO" not in assumed and "recompute" not in assumed


def test_an_offload_that_fits_says_how_much_host_memory_it_needs() -> None:
    """ZeRO-Offload of an 8B model keeps ~128 GB of optimizer state and gradients in host RAM:
    a 64 GB workstation would run out there, not on the GPU."""
    reply = ask("llama 3.1 8b, zero-3 with cpu offload on a single a100 40gb, seq 2048, "
                "full finetune").reply
    assert reply.startswith("*Fits")
    assert _gb(reply, r"CPU memory for the offload: ([\d,.]+) GB per GPU") > 100


def test_a_context_past_the_models_limit_is_said_up_front() -> None:
    """Llama 3 8B was trained for 8,192 tokens (Llama 3.1 for 128k): a 32k question says so
    under the verdict, and the limit is an assumption of the answer."""
    result = ask("serve llama 3 8b instruct with 32k context for 20 users on one h100")
    assert result.reply.splitlines()[1].startswith("Note: llama-3-8b was trained for 8,192")
    ok = ask("serve llama 3.1 8b instruct with 32k context for 20 users on one h100")
    assert "trained for" not in ok.reply


def test_a_model_trained_for_less_than_4k_is_sized_at_its_own_context() -> None:
    """Held-out set 26: Falcon 40B from scratch was sized at 4,096 tokens, past its 2,048, with
    a note about vLLM's --max-model-len in a pretraining answer."""
    result = ask("falcon 40b from scratch, 1T tokens, 256 H100s - how many days? assume mfu 35%")
    assert result.parsed.get("seq_len") is None and "trained for" not in result.reply
    assert "seq 2,048 tokens" in result.reply and result.reply.startswith("*33.9 days*")
    longer = ask("falcon 40b pretraining at 8k context on 256 h100s").reply
    assert "trained for 2,048" in longer and "vLLM" not in longer


def test_given_gpus_without_a_layout_get_the_planners_best_layout_there() -> None:
    """3B on 64 H100s, nothing said about ZeRO: plain DDP (fitcheck's default, 71 GB, borderline)
    fits, but an engineer would shard the optimizer state and gradients (without accumulation
    ZeRO-2 moves what DDP does): the verdict, the breakdown and the band are the planner's
    layout; the default's total follows it."""
    reply = ask("pretrain a 3b model on 300B tokens on 64 h100s").reply
    lines = reply.splitlines()
    verdict = next(line for line in lines if line.startswith("*Fits"))
    assert "as stated" not in verdict and "ZeRO-2" in verdict
    assert _gb(reply, r"= \*([\d,.]+) GB\*") < 40
    assert "The default layout (dp=64" in reply and "which also fits" in reply
    said = ask("pretrain a 3b model on 300B tokens on 64 h100s, plain ddp zero 0").reply
    assert "*Fits as stated on 64x" in said and "The default layout" not in said


def test_a_mac_is_not_sized_but_the_job_is_said_for_scale() -> None:
    """Apple silicon is not modelled: the reply says so, then what the job needs on a GPU."""
    reply = ask("m3 max macbook w/ 128GB unified memory, can it run llama 3.3 70b in 4-bit?").reply
    assert reply.startswith("Apple silicon")
    assert "For scale, on a GPU" in reply and "weights 39.8" in reply


def test_a_price_per_instance_is_divided_by_its_gpus() -> None:
    """Two p5.48xlarge (8 H100s each) at $98/h per instance: $12.25 per GPU-hour."""
    reply = ask("cost to train a 1.3B on 100B tokens with two p5.48xlarge at $98/hr per instance?").reply
    assert "$12.25 per GPU-hour" in reply
    hours = _gb(reply, r"([\d,]+) GPU-hours")
    cost = _gb(reply, r"≈\$([\d,]+)")
    assert abs(cost - hours * 12.25) <= 12.25


def test_cheaper_option_in_a_thread_lists_the_cheapest_gpu_types_that_fit() -> None:
    """"cheaper option?" after a serving answer: the thread's job on every catalog GPU type,
    the cheapest per hour first, each row a count that fits."""
    previous = {"model": "llama-3.1-8b", "task": "finetune", "finetune_method": "lora",
                "gpu": "a100-80gb", "gpu_count": 1, "seq_len": 4096}
    result = ask("any cheaper option?", previous)
    assert result.reply.startswith("*Cheapest per hour for llama-3.1-8b:")
    prices = [float(p.replace(",", "")) for p in re.findall(r"• \d+x [^:]+: ≈\$([\d,.]+)/h",
                                                             result.reply)]
    assert len(prices) == 3 and prices == sorted(prices)
    assert "plain DDP" not in result.reply


def test_the_fewest_gpus_to_serve_are_engines_people_deploy() -> None:
    """Qwen2.5-7B for 1,000 users at 8k: 7 A100s as TP=1 x PP=7 would hold them, but every token
    would cross 7 stages and no one runs a 7-GPU engine: the answer is the node's 8 GPUs as
    replicas without stages. A count the user has keeps every shape (6 A100s: TP=2 x PP=3)."""
    reply = ask("serve qwen2.5 7b for 1000 users 8k ctx on a100 80gb").reply
    assert "on 8x A100 80GB SXM (8 replicas of TP=1)" in reply.splitlines()[0]
    six = ask("serve llama 3.1 70b 16k ctx 32 users on 6 a100 80gb").reply
    assert "(TP=2, PP=3)" in six.splitlines()[0]


def test_serving_says_what_the_planned_gpus_cost() -> None:
    """70B for 100 users at 8k on H100s at $2.50 per GPU-hour: the GPUs the plan uses x the
    stated price, per hour and per 730-hour month; without a price, the catalog's."""
    reply = ask("what would it cost per hour to serve llama 3.1 70b for 100 users at 8k on "
                "h100s at $2.50/gpu-hour").reply
    gpus = int(_gb(reply, r"on (\d+)x H100"))
    assert f"Cost: {gpus} GPUs x $2.50/h = *${gpus * 2.5:,.2f}/h*" in reply
    assert f"≈${gpus * 2.5 * 730:,.0f} a month (730 h; your price)" in reply
    catalog = ask("serve llama 3.1 70b for 100 users at 8k on h100s").reply
    assert "catalog on-demand price" in catalog


def test_a_first_message_asking_for_the_cheapest_gpu_gets_the_catalog_cheapest_first() -> None:
    """'What's the cheapest GPU to serve Mistral 7B at 4k for 8 users?' names no GPU: the answer
    is the catalog's GPU types that serve it, cheapest per hour first, not 'name a GPU'."""
    reply = ask("What's the cheapest GPU to serve Mistral 7B with 4k context for 8 users?").reply
    assert reply.startswith("*Cheapest per hour for mistral-7b")
    assert reply.count("\n• ") >= 3
    named = ask("which GPU should we use for llama 3.1 8b, we have h100s").reply
    assert not named.startswith("*Cheapest")  # a GPU named: it is answered on that GPU


def test_an_rl_job_says_under_the_verdict_that_only_the_policy_was_sized() -> None:
    """PPO with a named critic and reward model (review 14): the engine sizes the trained policy;
    the headline says so, and the line under it names what is not counted."""
    answer = ask("PPO RLHF on Llama 3.1 8B with a reward model and critic, H100s")
    assert answer.answer is not None
    head, second = answer.reply.splitlines()[:2]
    assert head.endswith("(the policy model only)*")
    assert "critic" in second and "reward" in second and "rollout" in second
    plain = ask("full fine-tune llama 3.1 8b on h100s")
    assert "policy model" not in plain.reply


def test_a_stated_expert_parallel_size_is_the_serving_layout_the_verdict_is_about() -> None:
    """GLM-4.5-Air with ep 4, tp 2 on 8 MI300X (held-out set 14): the planner had served it as
    4 replicas of TP=2 with every expert on every replica (110.5 GB per GPU) under a breakdown
    of the stated EP=4 (67.9 GB), so the band did not contain the estimate and the headline's
    sequences were not the breakdown's."""
    answer = ask("glm-4.5-air with ep 4 tp 2 on 8 MI300X for serving, fp8 kv cache, 32k ctx")
    assert answer.answer is not None and answer.answer.planner is not None
    top, planned = answer.answer, answer.answer.planner.layout
    assert planned is not None and planned.plan.ep == 4 and planned.plan.tp == 2
    assert planned.per_gpu_bytes.total == top.per_gpu_bytes.total
    assert top.error_band.low_bytes <= top.per_gpu_bytes.total <= top.error_band.high_bytes
    headline = _gb(answer.reply, r"up to ([\d,]+) concurrent")
    room = _gb(answer.reply, r"room for ([\d,]+) concurrent")
    assert headline == room


def test_how_many_to_serve_with_no_load_also_says_what_twice_the_gpus_hold() -> None:
    """"Serve Qwen2.5-72B on A100 80GB" (review 14): 2 GPUs hold the weights with room for 2
    sequences, which is no serving answer alone; TP=4 halves each GPU's weights and the reply
    says how many sequences that holds."""
    answer = ask("Serve Qwen2.5-72B on A100 80GB")
    assert answer.answer is not None and answer.answer.plan.gpus == 2
    line = next(x for x in answer.reply.splitlines() if x.startswith("Or 4 GPUs as TP=4"))
    assert _gb(line, r"up to ([\d,]+) sequences") > 10 * _gb(answer.reply, r"room for (\d+)")


def test_a_training_breakdown_without_gradients_says_why() -> None:
    """DeepSeek-V2-Lite on 8 H100s peaks at the end of the forward pass (review 14): the line
    says the gradients are not forgotten; a breakdown with gradients says nothing."""
    line = next(x for x in ask("full finetune deepseek v2 lite on 8 h100s").reply.splitlines()
                if x.startswith("Per GPU"))
    assert "grads" not in line and "before any gradient is allocated" in line
    with_grads = next(x for x in ask("llama 3 8b full finetune on 8 a100 80gb").reply.splitlines()
                      if x.startswith("Per GPU"))
    assert "grads" in with_grads and "before any gradient" not in with_grads


def test_a_cost_question_on_a_gpu_without_a_price_asks_for_one() -> None:
    """GB200s have no catalog price (review 14): the time is answered and the cost is asked
    for, not silently left out; with a stated price the cost is there."""
    head = ask("Pretrain Llama 3.1 8B on 1T tokens on 72 GB200s, how long and how much?"
               ).reply.splitlines()[0]
    assert "days" in head and "no catalog price" in head and "$" in head
    priced = ask("Pretrain Llama 3.1 8B on 1T tokens on 72 GB200s at $6/h, how much?")
    assert "no catalog price" not in priced.reply and "≈$" in priced.reply.splitlines()[0]


def test_a_stated_expert_parallel_size_without_tp_splits_the_gpus_over_its_ranks() -> None:
    """'serve glm-4.5-air with ep 4 on 8 mi300x' (review of this change): 4 attention ranks of
    TP=2, in the planner as in the breakdown; it had answered 'no valid split'."""
    answer = ask("serve glm-4.5-air with ep 4 on 8 mi300x")
    assert answer.answer is not None and answer.answer.planner is not None
    assert answer.answer.planner.fits
    planned = answer.answer.planner.layout
    assert planned is not None and (planned.plan.ep, planned.plan.tp) == (4, 2)
    assert planned.per_gpu_bytes.total == answer.answer.per_gpu_bytes.total


def test_a_verdict_on_the_stated_layout_and_its_breakdown_use_the_same_memory() -> None:
    """'what about 2 nodes?' (held-out set 15): 'Fits as stated ... of 84.9 GB usable' had a
    breakdown 'of a 80.7 GB budget' under it, which the same total is over."""
    previous = {"finetune_method": "full", "model": "llama-3.1-8b", "gpu_count": 8,
                "gpu": "h100-80gb", "seq_len": 4096, "micro_batch": 2, "zero_stage": 3,
                "task": "finetune"}
    head, _, line = ask("what about 2 nodes?", previous).reply.splitlines()[:3]
    assert head.startswith("*Fits as stated") and "usable" in head
    assert line.endswith("of 84.9 GB usable")


def test_serving_on_a_gpu_without_bf16_says_fp16_weights() -> None:
    """Phi-3-mini on a T4 (held-out set 15): the T4 has no bf16, so vLLM loads the bf16
    checkpoint as fp16; the reply had said 'weights bf16'."""
    reply = ask("batch of 64 requests at 2048 tokens each, phi-3-mini on a T4 — possible?").reply
    assert "weights fp16" in reply and "weights bf16" not in reply


def test_a_comparison_says_neither_sides_value_as_said_nor_a_default_its_lines_contradict() -> None:
    """'zero2 vs zero3 ... which one fits?' (held-out set 15): 'You said: ZeRO 2' and 'Assumed:
    recompute none' had sat under two lines both planned with full recompute."""
    reply = ask("zero2 vs zero3 for a full finetune of qwen2.5-14b on 8x A100 80GB at seq 4096 "
                "— which one fits?").reply
    said = next(x for x in reply.splitlines() if x.startswith("_You said:_"))
    assumed = next(x for x in reply.splitlines() if x.startswith("_Assumed:_"))
    assert "ZeRO 2" not in said and "recompute none" not in assumed


def test_a_small_kv_cache_per_sequence_is_said_in_megabytes_not_as_zero() -> None:
    """'KV cache per sequence per GPU 0.0 GB' (held-out set 15) for short contexts."""
    reply = ask("serve llama 3.2 1b at 512 tokens for 10 users on an l4").reply
    assert "per sequence per GPU 0.0 GB" not in reply
    assert re.search(r"KV cache per sequence per GPU \d+ MB", reply)


def test_a_stated_memory_utilisation_sizes_the_room_line_like_the_headline() -> None:
    """vLLM's --gpu-memory-utilization 0.7 leaves room for fewer sequences: the room under the
    breakdown is the headline's, and the budget is said as the user's, not assumed."""
    reply = ask("serve llama 3.1 70b on 4 h100s, 8k ctx, gpu memory utilization 0.7").reply
    up_to = _gb(reply, r"up to ([\d,]+) concurrent")
    room = _gb(reply, r"room for ([\d,]+) concurrent")
    assert up_to == room
    default = _gb(ask("serve llama 3.1 70b on 4 h100s, 8k ctx").reply, r"room for ([\d,]+) concurrent")
    assert room < 0.8 * default
    said = next(line for line in reply.splitlines() if line.startswith("_You said:_"))
    assumed = next(line for line in reply.splitlines() if line.startswith("_Assumed:_"))
    assert "memory budget 70%" in said and "memory budget" not in assumed


def test_a_cap_below_the_card_is_the_budget_the_plan_keeps_under() -> None:
    """'keep it under 40gb per gpu' on shared H100s: the layout chosen fits 40 GB, not 80."""
    reply = ask("llama 3 8b full finetune on 8 h100s, we share the gpus so keep it under 40gb "
                "per gpu").reply
    assert reply.startswith("*Fits on 8x H100")
    assert _gb(reply, r"= \*([\d,.]+) GB\*") <= 40.0
    assert _gb(reply, r"of a ([\d,.]+) GB budget") == 40.0
    assert "read as a budget of 40 GB per GPU" in reply and "I did not use" not in reply


def test_a_serving_comparison_of_gpus_is_won_on_memory_bandwidth() -> None:
    """Decoding reads every weight and the KV cache per token: between an L40S and an A100 80GB
    on the same count, the A100's 2.0 TB/s decodes faster, whatever the L40S's TFLOP/s."""
    reply = ask("L40S vs A100 80GB for serving Qwen2.5-7B, 8k, 16 users").reply
    assert "*A100 80GB SXM* decodes faster (2,039 GB/s of memory bandwidth per GPU)" in reply


def test_an_engine_over_nodes_is_tensor_parallel_in_each_node() -> None:
    """Review 28: DeepSeek-V3 in bf16 on H100s had been one engine of TP=1 x PP=24 (its MLA
    cache, whole on every TP rank, holds more that way), a layout no one runs; vLLM's guide
    puts TP inside a node and PP across nodes."""
    reply = ask("serve deepseek v3 in bf16 on h100s, how many").reply
    assert "on 24x H100 80GB SXM (3 nodes) (TP=8, PP=3)" in reply.splitlines()[0]


def test_a_split_models_kv_per_token_is_said_for_the_whole_model_too() -> None:
    """Set 28: the KV per token of Llama 3.1 405B on TP=8 x PP=2 was given per GPU only (32.3 KB);
    the model's own figure is 2 x 126 layers x 8 KV heads x 128 x 2 B = 516,096 B."""
    reply = ask("what's the KV cache per token for llama 3.1 405b? serving at 128k on 16x h100 "
                "(TP8 PP2)").reply
    assert "(32.3 KB per token; 516.1 KB per token for the whole model)" in reply


def test_offload_says_the_host_ram_of_a_node_on_a_replanned_layout_too() -> None:
    """Set 29: ZeRO-3 + CPU offload for 70B on 8 H100s, replanned with recompute, had no host
    RAM line, though the offload needs 141 GB per GPU of it: 1.1 TB on the node."""
    previous = {"model": "llama-3.1-70b", "task": "finetune", "finetune_method": "full",
                "gpu": "h100-80gb", "gpu_count": 8}
    reply = ask("what about with zero-3 + cpu offload on a single node", previous).reply
    assert "CPU memory for the offload: 141.1 GB per GPU (host RAM, pinned), 1,128.9 GB for a " \
        "node's 8 GPUs" in reply
