"""Training and serving switches written in words: ZeRO/FSDP, precision, optimizer, recompute,
FlashAttention, offload, LoRA/QLoRA and their target modules, quantization and KV-cache dtype.
(Parallel sizes and every other number are the binder's.)

Each rule is (pattern, field, value, note). Rules run in order and claim what they read, so the
negative forms ("no grad ckpt", "without flash attn") come before the positive ones and
"fp8 kv cache" is read before a bare "fp8". A pasted Hugging Face ``optim`` name is kept as
written ("paged_adamw_8bit"); "8-bit adam" is ``adamw_8bit``, "fused adamw" ``adamw_torch_fused``.
Bare dtypes ("bf16", "fp8", "4-bit") are left as ``_dtype`` for the task to decide: training
precision or serving quantization.
"""

from __future__ import annotations

import re
from typing import Any

from service.core.job.choices import OPTIMIZER_NAMES
from service.parser.scan import Scan

Rule = tuple[re.Pattern[str], str, Any, str]
G = "<group 1>"  # a rule's value: its first group, as a number
S = "<group 1 text>"  # a rule's value: its first group, as written
FSDP = "<fsdp>"
GGUF = "<gguf bits>"  # "70b q4": the usual llama.cpp file of that many bits
GGUF_DEFAULT = "<gguf>"  # "gguf" alone: Q4_K_M, unless a level is named ("q8 gguf")
PAIR = "<groups 1 and 2>"  # two values of the field, each at its own span ("kv fp8 vs bf16")
_QUANT_CONTEXT = re.compile(r"\d\s?b\s+(?:(?:at|in|as)\s+)?q\d|q\d\s*(?:gguf|quant)|gguf\s*q\d")
_GGUF = {"2": "gguf-q2_k", "3": "gguf-q3_k_m", "4": "gguf-q4_k_m", "5": "gguf-q5_k_m", "6": "gguf-q6_k",
         "8": "gguf-q8_0"}  # FSDP's stage: 2 with SHARD_GRAD_OP, 0 with NO_SHARD, else 3
# words that also carry other values ("lora_r: 32", "virtual stages 5")
_UNCLAIMED = ("framework", "finetune_method", "_adapter", "_lora_enabled", "pp_schedule")
_FSDP_2 = re.compile(r"shard_grad_op|grad[\s_]*op")
_NO = r"(?:no|without|w/o|disable[ds]?|turn\s+off|skip|not\s+using|don'?t\s+use)\s+(?:any\s+|the\s+)?"
_CKPT = (r"(?:(?:grad(?:ient)?|act(?:ivation)?s?)[\s\-_]*(?:ckpt|checkpointing|checkpoints?)|"
         r"recomp(?:ute|utation)?\b|activation\s+recomput\w*|checkpointing)")
PASTED_OPTIMIZERS = "|".join(sorted((n for n in OPTIMIZER_NAMES if "_" in n), key=len, reverse=True))
_FLASH = r"(?:flash[\s\-_]*(?:attn|attention)(?:[\s\-_]*v?[23])?|fa[23]|sdpa)"
# a switch turned off after its name: "grad checkpointing off", "offload: false", "... disabled"
_ZERO_OFFLOAD = re.compile(r"offload|infinity")
_OFF = r"\s*(?:[=:]\s*[\"']?)?(?:off|disabled?|false|none)\b"
# "load the ckpt off s3", "no ckpt saving": a checkpoint file, not recompute
_NOT_A_FILE = r"(?!\s*(?:s3|gcs|disk|hf|the\b|a\b|my\b|our\b|sav\w*|files?|uploads?|every\b))"


REWARD_NOTE = ("reward model sized as fine-tuning with its LM head and vocab logits (its score head "
               "has neither): an upper bound; chosen and rejected completions are not doubled")
HSDP_NOTE = ("HSDP with no shard group said read as FSDP full sharding (say 'shard group 8' for one "
             "node's HSDP)")
# a rule's note that another finding makes untrue: HSDP with its group said; PPO's reward model,
# which the RL scope line already says is not counted
NOTE_VOIDED_BY = {HSDP_NOTE: "shard_group", REWARD_NOTE: "_rl"}


def _r(pattern: str, field: str, value: Any, note: str = "") -> Rule:
    return re.compile(pattern), field, value, note


RULES: tuple[Rule, ...] = (
    # KV cache dtype before bare dtypes; "kv cache fp8 vs bf16": both are the KV's
    _r(r"\bkv(?:[ \-_]?cache)?(?:[ \-_]?dtype)?[ ]*(fp8|int8|int4|fp16|bf16)\s*(?:vs\.?|versus|or)\s*"
       r"(fp8|int8|int4|fp16|bf16|auto)\b", "kv_cache_dtype", PAIR),
    _r(r"\b(fp8|int8|int4|fp16|bf16|auto)\s*(?:vs\.?|versus|or)\s*(fp8|int8|int4|fp16|bf16)[\s\-_]{0,2}"
       r"kv(?:[\s\-_]*cache)?\b", "kv_cache_dtype", PAIR),
    # "fp8 kv cache vs auto": vLLM's --kv-cache-dtype auto (the model's 16-bit dtype)
    _r(r"\b(fp8|int8|int4|fp16|bf16)[\s\-_]{0,2}kv(?:[\s\-_]*cache)?(?:[\s\-_]*dtype)?\s*"
       r"(?:vs\.?|versus|or)\s*(auto|fp8|int8|int4|fp16|bf16)\b"
       r"(?![\s\-_]{0,2}(?:weights?|quant\w*|model)\b)", "kv_cache_dtype", PAIR),
    _r(r"\bkv(?:[ \-_]?cache)?(?:[ \-_]?dtype)?[ ]*(?:in|=|:|at|as)?[ ]*[\"']?(fp8|int8|int4|fp16|bf16)"
       r"(?![ ]?(?:weights?|quant\w*|model)\b)", "kv_cache_dtype", G),  # "int8 kv-cache fp8": fp8 is the KV's
    _r(r"\b(fp8|int8|int4|fp16|bf16)(?:_e4m3|_e5m2)?[\s\-_]{0,2}kv(?:[\s\-_]*cache)?\b", "kv_cache_dtype", G),
    _r(r"\bquantized\s+kv(?:[\s\-_]*cache)?", "kv_cache_dtype", "fp8", "quantized KV cache read as fp8"),
    # fine-tuning methods ("no lora", "skip qlora": every weight trains)
    _r(rf"\b{_NO}q?[\s\-]?lora\b", "finetune_method", "full", "'no LoRA' read as full fine-tuning"),
    # "no TP", "without pipeline parallelism": that dimension is 1
    _r(rf"\b{_NO}(?:tp|tensor[\s\-_]*(?:model[\s\-_]*)?parallel(?:ism)?)\b", "tp", 1),
    _r(rf"\b{_NO}(?:pp|pipeline[\s\-_]*(?:model[\s\-_]*)?parallel(?:ism)?)\b", "pp", 1),
    # "EP on", vLLM's --enable-expert-parallel: the experts over every GPU of the server (its
    # size is the GPUs over the TP size: ``rules.expert_parallel_on``)
    _r(r"\bep\s+(?:on|enabled|yes|true)\b|--enable-expert-parallel\b|\benable_expert_parallel\b"
       r"|\bwith\s+expert[\s\-_]*parallel(?:ism)?\b(?![\s\-_]*(?:size|degree|=|:|of|\d))"
       r"|\b(?:and|\+)\s+expert[\s\-_]*parallel(?:ism)?\b(?![\s\-_]*(?:size|degree|=|:|of|\d))",
       "_ep_on", True),
    # "2 replicas of TP=2": engines of TP GPUs each, no pipeline stages
    _r(r"\breplicas?\s+(?:of|with|at)(?=\s+(?:tp|tensor[\s\-_]*parallel))", "pp", 1,
       "replicas of a TP group: one engine per replica, no pipeline stages"),
    _r(r"\bq[\s\-]?lora\b", "finetune_method", "qlora", "QLoRA = LoRA on a 4-bit NF4 base"),
    _r(r"\blora\b", "finetune_method", "lora"),
    _r(r"--?enable[\-_]lora\b|\benable_lora\s*=\s*true\b", "_lora_enabled", True),
    # an adapter's settings: LoRA, or QLoRA where the base is 4-bit (``rules.py``)
    _r(r"\bpeft\b|\blora_r\b|\bloraconfig\b|\blora_alpha\b", "_adapter", True),
    _r(r"\bfull(?:y)?[\s\-]*(?:param(?:eter)?s?[\s\-]*)?(?:fine[\s\-]?tun\w*|ft|sft|finetun\w*)"
       r"|full[\s\-]?weight\s+fine"
       r"|\bfull[\s\-]*param(?:eter)?s?\b|\bfinetuning_type\s*[=:]\s*[\"']?full\b"  # LLaMA-Factory
       # "SFT llama-3.1-8b full, liger on" (the model's name is claimed before this is read)
       r"|(?<=\s\s)full(?=\s*[,;)])",
       "finetune_method", "full"),
    # DoRA (peft use_dora): LoRA plus a magnitude vector per adapted linear
    _r(r"\bdora\b|\buse_dora\b", "finetune_method", "lora",
       "DoRA sized as LoRA: its magnitude vectors are small, but its weight-norm step holds each "
       "adapted layer's full weight during the forward (peft: more memory than LoRA), not counted"),
    _r(r"(?:^|[,;(/]|\s-)\s*full(?:\s+(?:run|tune|training))?\s*(?=[,;)/]|\s-\s|$)",
       "finetune_method", "full",
       "'full' in a fine-tuning question read as full fine-tuning (every weight trains)"),
    # preference objectives (RLHF with generation, PPO/GRPO, is not one: it is left unread)
    _r(r"\b(dpo|ipo|kto|orpo|simpo|cpo)(?:[_\-]?(?:trainer|config))?\b", "objective", S,  # TRL's DPOTrainer
       "preference objective: chosen and rejected sequences, and a reference model for DPO/IPO/KTO"),
    # TRL precompute_ref_log_probs: the reference scored once before training, not held in it
    _r(r"\bprecompute_ref_log_probs\s*[=:]\s*(?:true|1)\b"
       r"|(?<!without\s)(?<!\bno\s)(?<!\bnot\s)(?<!n't\s)\bprecomput\w*\s+(?:the\s+)?ref(?:erence)?(?:\s+model)?(?:\s+log[\s\-_]*probs?)?\b"
       r"|\bref(?:erence)?(?:\s+model)?(?:\s+log[\s\-_]*probs?)?\s+(?:is\s+|are\s+|being\s+)?"
       r"(?:pre[\s\-]?computed|cached\s+(?:up\s*front|beforehand|offline))\b",
       "precompute_ref_log_probs", True),
    _r(r"\b(grpo|ppo|rloo|rlhf|reinforce\+\+)(?:[_\-]?(?:trainer|config))?\b", "_rl", S,
       "RL with generation (GRPO, PPO) sized as fine-tuning: the rollout engine, reward and "
       "critic models are not counted"),
    # a reward model (TRL RewardTrainer): a score head, not an LM head
    _r(r"\breward[\s\-_]*model(?:l?ing)?\b|\brewardtrainer\b|\breward[\s\-_]*trainer\b", "_reward", True,
       REWARD_NOTE),
    # "we're NOT using deepspeed, just plain DDP": a framework denied is not the stack
    _r(r"\b(?:not|no|without|never|don'?t|aren'?t)\s+(?:even\s+)?(?:using\s+|use\s+|with\s+|on\s+|"
       r"running\s+)?(?:deep[\s\-]?speed|fsdp2?|megatron)\b", "_framework_denied", True),
    # frameworks (read without claiming: "fsdp" also names a ZeRO stage)
    _r(r"\b(?:use_)?fsdp2?\b|\bhsdp\b|\bfsdp_(?:config|sharding_strategy|offload_params|version)\b"
       r"|\btorch[\s\-]?titan\b", "framework", "fsdp"),  # torchtitan trains with FSDP2
    _r(r"\bmegatron\b|\bnemo\b", "framework", "megatron"),
    _r(r"\b(?:use_)?deep[\s\-]?speed\b|\bds[\s\-_]*(?:zero|z|stage)[\s\-_]*[0-3]\b|\bds[_\s]config\b"
       r"|\bds_z[0-3]",
       "framework", "deepspeed"),
    # serving's engine: vLLM by name, its LLM(...) class, or its own argument names
    _r(r"\bvllm\b|\bllm\(\s*(?:model\s*=\s*)?[\"']|\b(?=(?:max_model_len|max_num_seqs|"
       r"gpu_memory_utilization)\s*=)", "_serving_framework", "vllm"),  # (reads, claims nothing)
    _r(r"\bsglang\b", "_serving_framework", "sglang"),
    # TGI is not modelled on its own: it reserves its KV cache from a memory share too
    # (--cuda-memory-fraction), so it is sized as vLLM is, and said
    _r(r"\btgi\b|\btext[\s\-_]generation[\s\-_]inference\b", "_tgi", True,
       "TGI sized as a vLLM-style server: both reserve the KV cache from a share of the GPU "
       "(TGI --cuda-memory-fraction); its own limits are --max-total-tokens and "
       "--max-batch-prefill-tokens"),
    # TensorRT-LLM likewise: said, with where its reservation differs
    _r(r"\btensor[\s\-_]*rt[\s\-_]*llm\b|\btrt[\s\-_]*llm\b|\btrtllm(?:[\s\-_]*(?:build|serve))?\b",
       "_trtllm", True,
       "TensorRT-LLM sized as a vLLM-style server: its KV cache takes "
       "kv_cache_free_gpu_memory_fraction (0.9) of the memory the engine leaves free after "
       "its weights and buffers, not 90% of the whole GPU, so its room differs somewhat; its "
       "fp8 KV cache needs Ada or Hopper (on an A100, int8 KV has the same bytes)"),
    # ZeRO / FSDP / DDP
    _r(r"\bzero[\s\-]*infinity\b", "zero_stage", 3, "ZeRO-Infinity = ZeRO-3 with CPU offload"),
    _r(r"\bzero[\s\-]*offload\b", "zero_stage", 2, "ZeRO-Offload = ZeRO-2 with optimizer offload"),
    _r(r"\bzero[\s\-_]*(?:stage[\s\-_]*)?(?:[=:]\s*)?([0-3])(?!\d|\.\d)", "zero_stage", G),
    _r(r"\bz([0-3])\b", "zero_stage", G),
    _r(r"\b(?:ds|deepspeed)[\s\-_]*(?:z|zero|stage)[\s\-_]*([0-3])(?![0-9])", "zero_stage", G),
    _r(r"(?<![\-_])[\"']?\bstage[\"']?\s*[:=]?\s*([0-3])\b", "zero_stage", G),  # not "pipeline-stage 2"
    _r(r"\b(?:shard_grad_op|grad[\s_]*op)\b", "zero_stage", 2, "FSDP SHARD_GRAD_OP = ZeRO-2"),
    _r(r"\bno_shard\b", "zero_stage", 0),
    _r(r"\bfull[\s_]shard\b", "zero_stage", 3, "FSDP FULL_SHARD = ZeRO-3"),
    _r(r"\bhsdp\b|\bhybrid[\s_]*shard\b", "zero_stage", 3, HSDP_NOTE),
    _r(r"\bfsdp2?\b", "zero_stage", FSDP, "FSDP full sharding = ZeRO-3"),
    _r(r"\bddp\b|\bplain\s+data[\s\-]parallel", "zero_stage", 0),
    _r(r"\bdistributed[\s\-_]*optimizer\b", "zero_stage", 1, "Megatron distributed optimizer = ZeRO-1"),
    # optimizers: a pasted Hugging Face ``optim`` name verbatim, then words (8-bit before bare)
    _r(rf"\b({PASTED_OPTIMIZERS})\b", "optimizer", S),
    _r(r"\bfused\s+adam(?:w)?\b|\badam(?:w)?\s+fused\b|\bfused=true\b", "optimizer", "adamw_torch_fused"),
    _r(r"\bpaged[\s\-_]*(?:adam(?:w)?[\s\-_]*8[\s\-]?bit|8[\s\-]?bit\s+adam(?:w)?)\b", "optimizer",
       "paged_adamw_8bit"),  # bitsandbytes.optim.PagedAdamW8bit (torchtune's optimizer key)
    _r(r"\badam(?:w)?[\s\-]*8[\s\-]?bit\b|\b8[\s\-]?bit\s+adam(?:w)?\b|\bbnb[\s\-_]*adamw?\b|\badam8bit\b",
       "optimizer", "adamw_8bit"),
    _r(r"\bsgd\s*(?:with\s*|\+\s*)?momentum\b|\bmomentum\s*sgd\b", "optimizer", "sgd_momentum"),
    _r(r"\bsgd\b", "optimizer", "sgd"),
    _r(r"\badafactor\b", "optimizer", "adafactor"),
    _r(r"\b8[\s\-]?bit\s+lion\b|\blion[\s\-]*8[\s\-]?bit\b", "optimizer", "lion_8bit"),
    _r(r"\blion\b", "optimizer", "lion"),
    _r(r"\b(?:paged_)?adamw?(?:_hf|_32bit|_torch_\w+)?\b", "optimizer", "adamw"),
    # recompute: "do I need gradient checkpointing?" asks; the planner's answer says
    _r(r"\b(?:do|does|would|will|should)\s+(?:i|we|you|it|they)\s+(?:need|have\s+to|require|want)\s+"
       rf"(?:to\s+)?(?:use\s+|turn\s+on\s+|enable\s+)?(?:full\s+|selective\s+)?{_CKPT}",
       "_recompute_asked", True),
    # a bare "ckpt" is recompute only when switched: "w/o ckpt", "ckpt off" (else a checkpoint file)
    _r(rf"\b{_NO}(?:full\s+)?(?:{_CKPT}|ac\b|gc\b|ckpt\b{_NOT_A_FILE})"
       rf"|\b(?:grad(?:ient)?[\s\-_]*)?{_CKPT}{_OFF}"
       rf"|\b(?:full\s+)?(?:ac|gc){_OFF}|\bckpt{_OFF}{_NOT_A_FILE}", "recompute", "none"),
    _r(r"\b(?:gradient_checkpointing|enable_activation_checkpointing|use_gradient_checkpointing)"
       r"\s*[=:]\s*(?:false|0)\b"
       r"|\[activation_checkpoint\][^\[]{0,200}?\bmode\s*=\s*[\"']?none\b",  # torchtitan's toml
       "recompute", "none"),
    # torchtune, unsloth: ``enable_activation_checkpointing=True``, ``use_gradient_checkpointing="unsloth"``
    _r(r"\b(?:enable_activation_checkpointing|use_gradient_checkpointing|fsdp_activation_checkpointing)"
       r"\s*[=:]\s*[\"']?(?:true|1|unsloth)\b",
       "recompute", "full", "gradient checkpointing = full recompute (layer inputs kept)"),
    _r(r"\bselective\s+(?:activation\s+)?(?:recomp\w*|checkpointing|ckpt|ac)\b|--recompute-activations\b"
       r"|\b(?:recomp\w*|activation\s+checkpointing|ac)\s*[=:]?\s*[\"']?selective\b"
       r"|recompute[\-_]granularity[\s=:\"']+selective"
       r"|\[activation_checkpoint\][^\[]{0,200}?\bmode\s*=\s*[\"']?selective\b"
       r"|(?<=\bor\s)selective\b(?!\s+\w+\s+(?:of|for))|(?<=\bvs\s)selective\b",  # "full ckpt or selective"
       "recompute", "selective"),
    _r(rf"\bfull\s+{_CKPT}|\b{_CKPT}|recompute[\-_]granularity[\s=:\"']+full"
       r"|\bfull\s+ac\b|\bac\s*[=:]\s*[\"']?full\b"  # torchtitan's "full AC"
       # "gc on", "AC on", "with gc", ", gc": gradient / activation checkpointing said short
       r"|\b(?:gc|ac)\s*(?:on|enabled|[=:]\s*(?:true|1|on))\b"
       r"|(?:\bwith\s+|[,;+]\s*)gc\b(?!\s*(?:off|disabled|[=:]))",
       "recompute", "full", "gradient checkpointing = full recompute (layer inputs kept)"),
    # FlashAttention
    _r(rf"\b{_NO}{_FLASH}|\b{_FLASH}\s*(?:off|disabled|[=:]\s*false)\b|\beager\s+attention\b"
       r"|attn_implementation\s*[=:]\s*[\"']?eager|\bvanilla\s+attention\b|\bnaive\s+attention\b",
       "flash_attn", False),
    _r(rf"\b{_FLASH}|--use-flash-attn\b|flash_attention_2", "flash_attn", True),
    # one person using a local server: one sequence at a time
    _r(r"\b(?:just|only)\s+me\b(?!\s*(?:\+|and|&|plus)\s)|\bsingle[\s\-]user\b|\bjust\s+for\s+me\b"
       r"|\bpersonal\s+use\b|\b(?:just|only)\s+(?:one|a\s+single|1)\s+(?:sequence|seq|request|req|user|"
       r"session|stream|conversation|chat)\b", "concurrent", 1),
    # a fused linear + cross-entropy kernel: the full logits are never built
    _r(r"\b(?:no|without)\s+liger\b|\bliger(?:[\s\-_]*kernels?)?\s*(?:off|disabled|[=:]\s*false)\b"
       r"|\buse_liger(?:_kernel)?\s*[=:]\s*false\b", "chunked_loss", False),
    _r(r"(?<![/\w])unsloth\b(?![/\-_])", "chunked_loss", True,
       "Unsloth read as its fused cross-entropy (no full logits); its offloaded checkpointing and "
       "16-bit embeddings are not modelled, so this is an upper bound"),
    _r(r"\buse_liger(?:_kernel)?\s*[=:]\s*true\b|\bliger(?:[\s\-_]*kernels?)?\b"
       r"|\bcut[\s\-_]*cross[\s\-_]*entropy\b|\bfused[\s\-_]*(?:linear[\s\-_]*)?cross[\s\-_]*entropy\b"
       r"|\bchunked[\s\-_]*(?:loss|cross[\s\-_]*entropy|ce)\b", "chunked_loss", True,
       "Liger/cut cross-entropy: a fused linear + cross-entropy kernel, no full logits"),
    # offload
    _r(rf"\b{_NO}(?:cpu[\s\-]*)?offload\w*|\b(?:cpu[\s\-_]*)?offload\w*{_OFF}"
       r"|\bfsdp_offload_params\s*[=:]\s*false\b", "offload", "none"),
    _r(r"\boffload\w*\s+(?:of\s+|for\s+)?(?:the\s+)?(?:params|parameters|weights|everything|all|both)\b"
       r"|\boffload_param\b"
       r"|\boffload\w*\s+(?:of\s+|for\s+)?(?:the\s+)?optimi[sz]er(?:\s+states?)?\s+(?:and|&|\+|plus)\s+(?:the\s+)?"
       r"(?:params|parameters|weights)\b"
       r"|\bzero[\s\-]*infinity\b|\bparam(?:eter)?s?\s+offload|\bfsdp_offload_params\s*[=:]\s*true\b"
       # Trainer's fsdp="full_shard offload": CPUOffload(offload_params=True), the step on the CPU
       r"|\bfsdp\s*=\s*[\"'][^\"']*\boffload\b"
       r"|\b(?:push|move|put|keep)\s+(?:the\s+)?(?:params|parameters|weights)(?:\s+and\s+(?:the\s+)?"
       r"optimi[sz]er(?:\s+states?)?)?\s+(?:to|on|in)\s+(?:the\s+)?(?:cpu|host|ram)\b"
       r"|\b(?:params|parameters|weights)\s+(?:and|&|\+)\s+(?:the\s+)?optimi[sz]er(?:\s+states?)?"
       r"\s+(?:both\s+)?(?:offload\w*|(?:on|to|in)\s+(?:the\s+)?cpu)"
       r"|\boptimi[sz]er(?:\s+states?)?\s+(?:and|&|\+)\s+(?:the\s+)?(?:params|parameters|weights)"
       r"\s+(?:both\s+)?(?:offload\w*|(?:on|to|in)\s+(?:the\s+)?cpu)",
       "offload", "optimizer_and_params"),
    _r(r"\b(?:push|move|put|keep)\s+(?:the\s+)?optimi[sz]er(?:\s+states?)?\s+(?:to|on|in)\s+(?:the\s+)?"
       r"(?:cpu|host|ram)\b", "offload", "optimizer"),
    # "will it fit or do we need offload?": a question, not the setting (the answer says)
    _r(r"\b(?:do|does|would|will|should)\s+(?:i|we|you|it|they)\s+(?:need|have\s+to|require|want)\s+"
       r"(?:to\s+)?(?:use\s+)?(?:any\s+|some\s+)?(?:cpu[\s\-]*)?offload\w*"
       r"(?:\s+(?:the\s+)?optimi[sz]er(?:\s+states?)?)?\b(?=\s*\?|\s+(?:or|for|to|when|with|on|if)\b|\s*$)"
       r"|\b(?:need|needs|needed)\s+(?:to\s+)?(?:cpu[\s\-]*)?offload\w*\s*\?",
       "_offload_asked", True),
    _r(r"\b(?:cpu[\s\-]*)?offload\w*\b|\bzero[\s\-]*offload\b", "offload", "optimizer"),
    _r(r"\binterleaved(?:[\s\-_]+(?:1f1b|pipeline|schedule|pp|virtual))?\b|\bvirtual[\s\-_]+(?:pipeline[\s\-_]+)?stages?\b"
       r"|--virtual-pipeline-model-parallel-size\b",
       "pp_schedule", "interleaved", "interleaved 1F1B: each GPU holds several pipeline chunks"),
    _r(r"--sequence-parallel\b|\bsequence[\s\-_]*parallel(?:ism)?\b(?![\s\-_]*(?:size|=|\d))",
       "sequence_parallel", True),
    # serving weights ("unquantized": the checkpoint's own 16-bit weights)
    _r(r"\bunquantized\b|\bnot\s+quantized\b|\bno\s+quantization\b|\bwithout\s+quantization\b",
       "quantization", "none"),
    _r(r"\b(?:int4|4[\s\-]?bit|w4a16)[\s\-_]*awq\b|\bawq[\s\-_]*(?:int4|4[\s\-]?bit|w4a16)\b|\bawq\b",
       "quantization", "awq"),  # AWQ is 4-bit: "int4 awq" is one format
    _r(r"\bgptq[\s\-_]*(?:8[\s\-]?bit|int8)\b|\b8[\s\-]?bit\s+gptq\b", "quantization", "gptq-8bit"),
    _r(r"\b(?:int4|4[\s\-]?bit)[\s\-_]*gptq\b|\bgptq[\s\-_]*(?:int4|4[\s\-]?bit)\b|\bgptq\b",
       "quantization", "gptq"),
    _r(r"\b(?:gguf[\s\-_]*)?(q[2-8]_(?:k_[ms]|k|0))\b", "quantization", G),
    _r(r"\bq([2-8])\b(?!_)", "quantization", GGUF,
       "a bare Qn read as llama.cpp's Qn_K_M (Q8_0, Q6_K)"),
    _r(r"\bgguf\b", "quantization", GGUF_DEFAULT, "GGUF read as Q4_K_M"),
    _r(r"\bmx[\s\-_]?fp4\b", "quantization", "mxfp4"),  # OCP microscaling: gpt-oss's checkpoints
    _r(r"\bnf4\b|\bbnb[\s\-_]*4[\s\-]?bit\b|load_in_4bit\s*[=:]\s*true"
       r"|\bquantization_bit\s*[=:]\s*4\b", "quantization", "nf4"),  # LLaMA-Factory: bitsandbytes
    _r(r"load_in_8bit\s*[=:]\s*true|\bllm\.int8\b|\bquantization_bit\s*[=:]\s*8\b", "_dtype", "int8"),
    # fp16 with autocast ("fp16 amp") before the bare dtypes
    _r(r"\b(?:fp|float)16[\s\-_]*(?:amp|mixed(?:[\s\-]precision)?)\b"
       r"|\b(?:amp|mixed[\s\-]precision)[\s\-_]*(?:in\s+|with\s+)?(?:fp|float)16\b",
       "precision", "fp16_mixed"),
    # bare dtypes: precision for training, weights for serving
    _r(r"\bpure\s+bf16\b|\bbf16\s+(?:only|everything|weights\s+and\s+optimizer)\b", "precision", "bf16"),
    _r(r"\b(?:fp|float|bfloat)(8|16|32)\b|\b(bf16|tf32)\b|\b(int8|int4)\b|\b([48])[\s\-]?bits?\b",
       "_dtype", G),
    _r(r"\bmixed[\s\-]precision\b|\bamp\b", "precision", "bf16_mixed"),
)

# a dtype said to be missing: "has no bf16", "doesn't support fp8", "without bf16"
_DTYPE_DENIED = re.compile(r"\b(?:no|without|not|lacks?|lacking|doesn'?t\s+(?:have|support|do)"
                           r"|don'?t\s+(?:have|support)|can'?t\s+(?:do|use|run)|isn'?t)"
                           r"\s+(?:native\s+|any\s+|real\s+|hardware\s+)?$")
_DTYPES = {"8": "fp8", "16": "fp16", "32": "fp32", "bf16": "bf16", "tf32": "fp32",
           "int8": "int8", "int4": "int4", "4": "int4"}


def _dtype(match: re.Match[str]) -> str:
    text = match.group(0)
    if text.startswith("bfloat"):
        return "bf16"
    groups = [g for g in match.groups() if g]
    value = groups[0] if groups else text
    if re.fullmatch(r"[48][\s\-]?bits?", text):
        return "int4" if text[0] == "4" else "int8"
    return _DTYPES.get(value, value)


# Every match of a field's rules contains one of these: the rules only look near them.
_TRIGGERS: dict[str, tuple[str, ...]] = {
    "tp": ("tp", "tensor"), "pp": ("pp", "pipeline", "replica"), "_ep_on": ("ep", "expert"),
    "kv_cache_dtype": ("kv",),
    "finetune_method": ("lora", "full", "dora"), "_adapter": ("lora", "peft"),
    "_lora_enabled": ("lora",),
    "_serving_framework": ("vllm", "sglang", "llm(", "max_model_len", "max_num_seqs",
                           "gpu_memory_utilization"),
    "_tgi": ("tgi", "generation"),
    "_trtllm": ("trt", "tensorrt", "tensor"),
    "objective": ("dpo", "ipo", "kto", "orpo", "simpo", "cpo"),
    "precompute_ref_log_probs": ("precomput", "pre-comput", "pre comput", "cached"),
    "_rl": ("grpo", "ppo", "rloo", "rlhf", "reinforce"), "_reward": ("reward",),
    "_framework_denied": ("deep", "fsdp", "megatron"),
    "framework": ("fsdp", "hsdp", "megatron", "nemo", "deep", "titan", "ds"),
    "zero_stage": ("zero", "z0", "z1", "z2", "z3", "ds", "deepspeed", "stage", "shard", "grad", "hsdp",
                   "hybrid", "fsdp", "ddp", "data", "distributed"),
    "optimizer": ("adam", "sgd", "momentum", "ada", "lion", "fused", "paged", "bnb"),
    # fsdp_activation_checkpointing too
    "recompute": ("ckpt", "checkpoint", "recomp", "selective", "ac", "gc"),
    "_recompute_asked": ("ckpt", "checkpoint", "recomp"),
    "flash_attn": ("flash", "fa2", "fa3", "sdpa", "eager", "vanilla", "naive", "attn"),
    "chunked_loss": ("liger", "cross", "chunked", "unsloth"),
    "concurrent": ("me", "user", "personal", "just", "only"),
    "offload": ("offload", "infinity"), "_offload_asked": ("offload",),
    "sequence_parallel": ("sequence",),
    "pp_schedule": ("interleav", "virtual"),
    "quantization": ("awq", "gptq", "gguf", "mxfp4", "quantiz",
                     "q2", "q3", "q4", "q5", "q6", "q8", "nf4", "bnb", "load_in",
                     "quantization_bit"),
    "_dtype": ("fp", "float", "bf16", "tf32", "int8", "int4", "bit", "load_in", "llm.int8",
               "quantization_bit"),
    "precision": ("pure", "bf16", "mixed", "amp"),
}


def find_knobs(scan: Scan) -> None:
    """Add findings for every rule that matches (claiming its span)."""
    for pattern, field, value, note in RULES:
        for m in scan.finditer(pattern, near=_TRIGGERS[field]):
            if not scan.free(m.start(), m.end()):
                continue
            if value == PAIR:
                for group in (1, 2):
                    scan.add(field, m.group(group), m.start(group), m.end(group), note)
                scan.claim(m.start(), m.end())
                continue
            if field == "_dtype":
                if _DTYPE_DENIED.search(scan.low[max(0, m.start() - 32):m.start()]):
                    scan.claim(m.start(), m.end())  # "fp16 since the v100 has no bf16"
                    continue
                found: Any = _dtype(m) if value == G else value  # "load_in_8bit: true" is int8
            elif value == GGUF:
                near = scan.low[max(0, m.start() - 12):m.end() + 8]
                if m.group(1) not in _GGUF or not _QUANT_CONTEXT.search(near):
                    continue  # "by q3" is a quarter
                found = _GGUF[m.group(1)]
            elif value == GGUF_DEFAULT:
                if any(str(v).startswith("gguf-") for v in scan.values("quantization")):
                    scan.claim(m.start(), m.end())
                    continue
                found = "gguf-q4_k_m"
            elif field == "zero_stage" and (named := _ZERO_OFFLOAD.search(m.group(0))):
                # ZeRO-Offload, ZeRO-Infinity: the stage and the offload they name
                offload = "optimizer_and_params" if named.group(0) == "infinity" else "optimizer"
                scan.add("offload", offload, m.start(), m.end(), claim=False)
                found = value
            elif value == FSDP:
                found = 2 if _FSDP_2.search(scan.low) else 0 if "no_shard" in scan.low else 3
                note = note if found == 3 else ""
            elif value == G and field in ("kv_cache_dtype", "quantization"):
                found = m.group(1) if field == "kv_cache_dtype" else "gguf-" + m.group(1)
            elif value == G:
                found = int(m.group(1))
            elif value == S:
                found = m.group(1)
            else:
                found = value
            scan.add(field, found, m.start(), m.end(), note, claim=field not in _UNCLAIMED)
    _lora_targets(scan)


_TARGETS = re.compile(r"target_modules\s*[=:]\s*(?P<list>\[[^\]\n]{0,300}\]|[\"'][^\"'\n]{0,80}[\"'])")
# a list of attention projections: "q,k,v,o", "q_proj/v_proj", "qkv", "qkvo"
_PROJS = r"(?:[qkvo](?:_proj)?(?:(?:\s*[,/&+]\s*|\s+)(?:and\s+)?[qkvo](?:_proj)?){1,3}|qkvo?)"
_ATTN_ONLY = re.compile(r"\b(?:(?:attention|attn)(?:[\s\-](?:projections?|layers?|modules?|weights))?"
                        r"[\s\-]only"
                        # "rank 16 on q_proj,v_proj", "lora on q,v"
                        rf"|(?:on|to|targets?)\s+(?:the\s+)?{_PROJS}(?:_proj)?\b(?!\s*(?:and|,)\s*(?:mlp|gate|up|down))"
                        r"|only\s+(?:on\s+)?(?:the\s+)?attention|"
                        rf"{_PROJS}(?:[\s_]*proj\w*)?\s+only"
                        rf"|only\s+(?:on\s+)?(?:the\s+)?{_PROJS}|on\s+q_proj\s+and\s+v_proj)\b")
_ALL_LINEAR = re.compile(r"\ball[\s\-_]*linear(?:\s+layers)?\b|\ball\s+(?:the\s+)?projections\b"
                         r"|\blora_target\s*[=:]\s*[\"']?all\b|\blora_target_linear\s*[=:]\s*true\b")
_ATTENTION_MODULES = ("q_proj", "k_proj", "v_proj", "o_proj", "query_key_value", "c_attn")


def _lora_targets(scan: Scan) -> None:
    """``target_modules=[...]``, "attention only", "all linear layers"."""
    for m in scan.finditer(_TARGETS):
        names = m.group("list").lower()
        attention = all(p in _ATTENTION_MODULES for p in re.findall(r"[a-z_]+", names))
        scan.add("lora_targets", "attention" if attention and "linear" not in names else "all_linear",
                 m.start(), m.end())
    for m in scan.finditer(_ATTN_ONLY):
        scan.add("lora_targets", "attention", m.start(), m.end())
    for m in scan.finditer(_ALL_LINEAR):
        scan.add("lora_targets", "all_linear", m.start(), m.end())
