"""The last step: findings -> request fields, task, intent, comparison, the merge over the thread's
previous request, and what to say back (notes, numbers not used, a question, a problem)."""

from __future__ import annotations

import re
from typing import Any

from service.parser import rules
from service.parser.badinput import SQL, looks_like_sql
from service.parser.compare import against_previous, variants
from service.parser.dataset_size import examples_as_tokens
from service.parser.draft_model import DRAFT_WORDS, split_draft
from service.parser.engine_context import engine_context
from service.parser.expert_parallel import expert_parallel_on
from service.parser.extra_asks import cheaper_asked, kv_asked, launch_asked, price_asked
from service.parser.followup import (
    REQUEST_FIELDS,
    merge,
    restates,
    same_family,
    same_family_experts,
)
from service.parser.instances import cloud_named
from service.parser.intent import Cues, cues
from service.parser.knobs import NOTE_VOIDED_BY
from service.parser.maximum import asked, asked_model
from service.parser.scaling import apply_scaling
from service.parser.scan import Scan
from service.parser.throughput import mfu_from_tflops
from service.parser.token_counts import token_counts
from service.parser.types import Finding, Parsed, Scope, Unknown
from service.parser.user_counts import user_counts

MODEL_FIELDS = ("model", "params_b", "arch")
MAX_IGNORED = 6  # a long paste's unread numbers: the first few are enough to say


# a correction or a move to another setup: a setting written again after one of these replaces
# what was written before it ("70b, sorry, 8b", "4 gpus... correction, 8", "today 2 a10g;
# moving to one l40s")
_SUPERSEDES = re.compile(
    r"\b(?:sorry|i\s+meant?|scratch\s+that|correction|no\s+wait|wait,?\s+no|oops|whoops|argh"
    r"|ugh|my\s+bad|er+|erm|edit|swapped|make\s+(?:it|that)|moving\s+to|move\s+to|migrat\w+\s+to"
    r"|switch(?:ing)?\s+to|planning\s+to|the\s+plan\s+is|proposal|proposed|next\s+run|next\s+quarter"
    r"|if\s+we\s+(?:switch|move)|want\s+to\s+(?:move|switch)|instead|we'?ll\s+have)\b")


def ordered_values(scan: Scan, corrections: bool = True) -> dict[str, list[Any]]:
    """Each field's distinct values in the order written, skipping "instead of X" values and
    values a correction or a move to another setup replaced (``_SUPERSEDES``; not in a
    comparison: "on a 4090, or should I rent an A100 instead?" weighs both)."""
    out: dict[str, list[Any]] = {}
    marks = [m.start() for m in _SUPERSEDES.finditer(scan.low)] if corrections else []
    findings = sorted(scan.findings, key=lambda f: f.start)
    for i, f in enumerate(findings):
        if f.end > f.start and scan.stale(f.start, f.end if f.field in ("model", "params_b") else None):
            continue
        if marks and f.end > f.start and _replaced(f, findings[i + 1:], marks):
            continue
        values = out.setdefault(f.field, [])
        if f.value not in values:
            values.append(f.value)
    named = out.get("model", [None])[0]
    if out.get("params_b") and named is not None:  # "phi-4 (14b)": the size describes it
        out["params_b"] = [v for v in out["params_b"] if not restates(named, v)]
        if not out["params_b"]:
            del out["params_b"]
    replaced = [f.value for f in findings if f.field == "model" and f.value not in out.get("model", [])]
    if replaced and "model" not in out and out.get("params_b"):
        # "llama 3.1 70b, argh, 8b I mean": the 8B of the same family
        sibling = same_family(replaced[0], out["params_b"][0])
        if sibling is not None:
            out["model"] = [sibling]
            del out["params_b"]
    return out


def _setting(finding: Finding) -> str:
    """What a finding sets: a bare size names the model too."""
    return "model" if finding.field == "params_b" else finding.field


def _replaced(finding: Finding, later: list[Finding], marks: list[int]) -> bool:
    """Whether the setting is written again after a correction or a move that follows this one."""
    return any(_setting(f) == _setting(finding) and f.end > f.start
               and f.value != finding.value and any(finding.end <= m < f.start for m in marks)
               for f in later)


def assemble(scan: Scan, prev: dict[str, Any]) -> Parsed:
    cue = cues(scan.low)
    defaulted: tuple[str, ...] = ()
    ordered = ordered_values(scan, corrections=not cue.compare)
    draft = split_draft(scan, ordered)
    if ordered.get("_dataset_len") and not ordered.get("seq_len"):
        ordered["seq_len"] = ordered["_dataset_len"]
    notes: list[str] = []
    unused_examples = examples_as_tokens(scan, ordered, prev.get("seq_len"), cue.time, notes)
    task = rules.task(cue, ordered, prev, scan.low)
    if not (cue.task(None) or prev.get("task")):  # no task word: say how it was read
        if task == "infer" and not cue.serve_setting and not ordered.get("quantization"):
            notes.append(rules.TASK_NOTE)
        elif task == "train" and not (cue.train or cue.train_knob):
            notes.append(rules.TRAIN_TASK_NOTE)
    unread = [f for f in scan.findings if f.field == "_unread"] + unused_examples \
        + token_counts(ordered, scan, task, notes) \
        + user_counts(ordered, scan, notes)
    if draft is not None:  # answered apart: "speculative decoding" is no longer unused
        unread = [f for f in unread if not DRAFT_WORDS.search(str(f.value).lower())]
    rules.normalize(ordered, task, notes, prev.get("finetune_method"))
    ignored = list(dict.fromkeys(str(f.value) for f in sorted(unread, key=lambda f: f.start) if f.value))
    ignored = ignored[:MAX_IGNORED]
    compare_field, compare = variants(scan.findings, ordered) if cue.compare else (None, ())
    if len(compare) < 2:
        compare_field, compare = against_previous(scan.low, ordered, prev)
    fields = {k: v[0] for k, v in ordered.items() if k in REQUEST_FIELDS}
    notes += _second_values(ordered, compare_field)
    for variant in compare:
        for key in variant.changes:
            fields.pop(key, None)
    if compare_field == "model":
        fields.pop("params_b", None)
    notes[:0] = [f.note for f in scan.findings if f.note and _used(f, fields, compare_field)
                 and NOTE_VOIDED_BY.get(f.note) not in ordered]
    notes += scan.notes
    apply_scaling(ordered.get("_scale", []), fields, prev, task, notes, ignored)
    how_many = bool(ordered.get("_how_many"))
    fields["task"] = task
    accum = ordered.get("_grad_accum", [None])[0]
    dp = ordered.get("_dp", [None])[0]
    rules.gpus_from_layout(fields, notes, dp if isinstance(dp, int) else None, scan.low)
    if ordered.get("_one_gpu") and "gpu_count" not in fields and not how_many:
        fields["gpu_count"] = 1
    rack = ordered.get("_rack_gpus", [None])[0]
    if isinstance(rack, int) and "gpu_count" not in fields and not how_many:
        fields["gpu_count"] = rack
        notes.append(f"an NVL{rack} rack read as its {rack} GPUs" if rack in (36, 72)
                     else f"{rack} GPUs in the NVL racks named")
    rules.virtual_from_layers(fields, ordered.get("_layers_per_virtual_stage", [None])[0], notes)
    rules.apply(fields, task, notes, accum if isinstance(accum, int) else None, prev)
    rules.price_per_server(fields, scan.low, notes)
    if cue.time or "tokens" in fields:  # a run's cost: the instance's own price
        rules.instance_price(fields, ordered.get("_instance", [None])[0], notes)
    if compare_field != "gpu":
        rules.mixed_fleet(fields, [(f.start, f.end, f.value) for f in scan.findings
                                   if f.field == "_gpu_mention" and isinstance(f.value, dict)],
                          scan.low, notes)
    if how_many and "nodes" not in fields and "gpus_per_node" in fields \
            and fields["gpus_per_node"] == fields.get("gpu_count"):
        # "how many ND H100 v5 VMs": the instance names the node, the count is the question
        del fields["gpu_count"]
    if not how_many:
        rules.serving_gpus(fields, notes)
    expert_parallel_on(fields, bool(ordered.get("_ep_on")), notes)
    if "params_b" in fields and not fields.keys() & {"model", "arch"} and compare_field is None:
        sibling = same_family(prev.get("model"), fields["params_b"])
        if sibling is not None:  # "what about the 405b?"
            fields["model"] = sibling
            del fields["params_b"]
            notes.append(f"{prev['model']}'s family in that size: {sibling}")
    if not fields.keys() & {"model", "params_b", "arch"} and compare_field is None:
        experts = same_family_experts(prev.get("model"), scan.low)
        if experts is not None:  # "what about 8x22b?" in a Mixtral thread
            fields["model"], written = experts
            ignored = [i for i in ignored if i.lower() != written]
            notes.append(f"{prev['model']}'s family in that size: {fields['model']}")
    merged = merge(prev, fields, how_many)
    # "how many", or how long/how much a run takes, with no GPU type: on the common one (a time on
    # one GPU that cannot hold the job would say nothing)
    # (and "what GPU do I need to pretrain on 300B tokens": the cheapest per hour would ignore
    # the tokens, which decide the bill)
    if (how_many or ((cue.time or _WHICH_GPU.search(scan.low)) and merged.get("tokens"))) \
            and "gpu" not in merged and compare_field != "gpu":
        merged["gpu"] = fields["gpu"] = rules.DEFAULT_GPU
        notes.append("no GPU type named: H100 80GB SXM")
        defaulted = ("gpu",)
    context = engine_context(scan.low, merged, notes)
    if context is not None:  # a pasted "vllm serve MODEL" with no --max-model-len
        merged["seq_len"] = fields["seq_len"] = context
        defaulted += ("seq_len",)
    tflops = ordered.get("_tflops", [None])[0]
    share = mfu_from_tflops(tflops, merged.get("gpu"), notes) \
        if isinstance(tflops, (int, float)) and "mfu" not in merged else None
    if share is not None:
        merged["mfu"] = fields["mfu"] = share
    unknown = _unknown(ordered, merged, compare_field)
    said = tuple(ignored)
    elsewhere = ordered.get("_not_covered")
    if elsewhere:
        return Parsed("invalid", fields, merged, tuple(notes), problem=str(elsewhere[0]), ignored=said,
                      hardware_problem=True)
    intent = _intent(cue, merged, compare_field, task)
    understood = bool(fields.keys() - {"task"}) or unknown is not None or bool(compare) \
        or bool(ordered.get("_arch_partial"))
    if prev and not understood and _CHEAPER.search(scan.low):  # "cheaper option?" in a thread
        kept = {k: v for k, v in prev.items() if k not in _HARDWARE}
        return Parsed(str(prev.get("task") or task), {}, kept, ignored=said, cheapest=True,
                      cloud=cloud_named(scan.low))
    if not prev and "gpu" not in merged and not compare and _WHICH_GPU.search(scan.low) \
            and ("model" in merged or "params_b" in merged or "arch" in merged):
        # "what's the cheapest GPU to serve Mistral 7B?": the catalog, cheapest first
        return Parsed(task, fields, merged, tuple(notes), ignored=said, cheapest=True,
                      cloud=cloud_named(scan.low))
    launch, priced = launch_asked(scan.low), price_asked(scan.low)
    if prev and not understood and (launch is not None or priced):
        # "can you give me the accelerate yaml for that", "and the cost per month?": the thread's
        # question again, with what is asked of it
        return Parsed(str(prev.get("task") or task), {}, prev, ignored=said,
                      launch_asked=launch, hourly=priced)
    if cue.help and (not understood or cue.model_help):
        return Parsed("help", {}, prev, ignored=said)
    if not prev and (_not_sizing(cue, fields, scan.low) or _gaming(cue, fields, scan.low)
                     or (not compare and _off_topic(cue, fields, scan.low))):
        return Parsed("invalid", {}, prev, problem=rules.OFF_TOPIC, ignored=said)
    if not understood and (not cue.domain or looks_like_sql(scan.low) or ignored):
        return Parsed("invalid", {}, prev, problem=_nothing(scan, ignored), ignored=said)
    out_of_range = rules.out_of_range(merged, compare)
    if out_of_range is not None:
        field, message = out_of_range
        kept = {k: v for k, v in merged.items() if k != field}
        return Parsed("invalid", fields, kept, tuple(notes), problem=_also(message, said), ignored=said)
    biggest = compare_field is None and asked_model(scan.low, merged)
    clarify = (None if "gpu" in merged else NAME_THE_GPUS) if biggest else \
        rules.clarify(merged, ordered, unknown, intent)
    if clarify is not None:  # a question back is the whole reply: it names what was not used too
        clarify = _also(clarify, said)
    maximize = "model" if biggest else asked(scan.low, fields) if compare_field is None else None
    deadline = ordered.get("_deadline_hours", [None])[0]
    return Parsed(intent, fields, merged, tuple(dict.fromkeys(notes)), compare_field, compare,
                  None, unknown, clarify, how_many, maximize, said,
                  deadline if isinstance(deadline, float) else None,
                  scope=_rl_scope(ordered.get("_rl", [None])[0]) or _speed_scope(
                      ordered.get("_speed"), task),
                  cloud=cloud_named(scan.low) if compare else None, defaulted=defaulted,
                  launch_asked=launch, draft=draft,
                  observed_gb=_first_number(ordered.get("_observed_gb")),
                  hourly=priced, cheaper=cheaper_asked(scan.low),
                  kv_asked=kv_asked(scan.low))


def _first_number(values: list[Any] | None) -> float | None:
    first = values[0] if values else None
    return float(first) if isinstance(first, int | float) else None


NAME_THE_GPUS = ("Name the GPUs for the largest model that fits, e.g. `biggest model I can lora "
                 "on one 3090`.")
# RL with generation: the engine sizes one trained model (the policy)
RL_SCOPE = Scope("the policy model only",
                 "These figures are the policy model alone: PPO also trains a critic (a second "
                 "model as large, with its own optimizer state) and holds a reward and a reference "
                 "model, and generates with a rollout engine (a vLLM share of each GPU when "
                 "colocated); none of those is counted.")
# GRPO and RLOO have no critic: the group's rewards are the baseline (TRL GRPOTrainer)
GROUP_RL_SCOPE = Scope("the policy model only",
                       "These figures are the policy model alone: GRPO/RLOO also hold a reference "
                       "model (unless beta is 0) and a reward model when the reward is not a "
                       "function, and generate with a rollout engine (a vLLM share of each GPU "
                       "when colocated, or GPUs of its own in server mode); none of those is "
                       "counted. There is no critic.")


def _speed_scope(asked: list[Any] | None, task: str) -> Scope | None:
    """Serving asked in requests per second or latency: the answer is the memory floor."""
    if not asked or task != "infer":
        return None
    return Scope("memory only", f"Throughput and latency ({', '.join(map(str, asked[:3]))}) are "
                 "not modelled: these GPUs are the memory floor for the sequences held at once; "
                 "meeting a request rate or a latency target can take more.")


def _rl_scope(algorithm: object) -> Scope | None:
    if not isinstance(algorithm, str):
        return None
    return GROUP_RL_SCOPE if algorithm.lower() in ("grpo", "rloo") else RL_SCOPE


def _second_values(ordered: dict[str, list[Any]], compare_field: str | None) -> list[str]:
    """"seq 4096 ... now we want 8192": one value is used, the other is said, not dropped."""
    out = []
    for field, values in ordered.items():
        numbers = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
        own_count = compare_field == "gpu" and field in ("gpu_count", "nodes")  # '4x A100 vs 2x H200'
        if field in REQUEST_FIELDS and field != compare_field and len(numbers) > 1 \
                and field != "params_b" and not own_count:
            others = ", ".join(f"{v:,}" if isinstance(v, int) else f"{v:g}" for v in numbers[1:3])
            out.append(f"{field.replace('_', ' ')}: used {numbers[0]:,}, not {others}")
    return out[:3]


def _also(text: str, ignored: tuple[str, ...]) -> str:
    return f"{text} (I didn't use: {', '.join(ignored)}.)" if ignored else text


# "thanks!", "ty", "perfect, thanks": the end of a thread, not a question
_THANKS = re.compile(r"^\W*(?:(?:ok(?:ay)?|great|perfect|awesome|nice|cool|got\s+it)\W+)?(?:thanks?|"
                     r"thank\s+you|thx|ty|cheers|much\s+appreciated)(?:\s+(?:so\s+much|a\s+lot|"
                     r"again|fitcheck))?\W*$")
WELCOME = ("You're welcome. Ask another question, or change one setting in this thread "
           "(e.g. `what about 8k?`).")


def _nothing(scan: Scan, ignored: list[str]) -> str:
    if looks_like_sql(scan.low):
        return SQL
    if _THANKS.match(scan.low) and not ignored:
        return WELCOME
    if ignored:
        return (f"I couldn't use {ignored[0]} on its own: say what it counts, e.g. `8 gpus`, "
                "`32k context`, `16 users`, `tp 4`, and the model and GPU if this starts a thread.")
    return rules.NOTHING


def _used(f: Finding, fields: dict[str, Any], compare_field: str | None) -> bool:
    return (f.field in fields and fields[f.field] == f.value) or f.field == compare_field \
        or f.field.startswith("_")


def _unknown(ordered: dict[str, list[Any]], merged: dict[str, Any],
             compare_field: str | None) -> Unknown | None:
    names = [u for u in ordered.get("_unknown", []) if isinstance(u, Unknown)]
    gpus = [u for u in names if u.kind == "gpu"]
    if gpus:
        return gpus[0]
    if not any(k in merged for k in MODEL_FIELDS) and compare_field != "model":
        return names[0] if names else None
    return None


_WORDS = re.compile(r"[a-z]{2,}")
_GAMES = re.compile(r"\b(?:cyberpunk|video\s+games?|gaming|games?\b(?!\s+theory)|fps|ray[\s\-]?tracing|dlss"
                    r"|1440p|2160p|4k\s+(?:ultra|high|max)|ultra\s+settings|steam)\b")
OFF_TOPIC_WORDS = 6
_CREATIVE = re.compile(r"\b(?:write|tell|compose|give)\s+(?:me\s+|us\s+)?(?:a\s+)?"
                       r"(?:haiku|poem|joke|song|story|limerick)s?\b")
_CHEAPER = re.compile(r"\b(?:cheaper|cheapest|less\s+expensive|lower\s+cost|other\s+(?:gpus?|options?|cards?)"
                      r"|alternatives?|(?:what|which)\s+(?:gpus?|cards?)\s+(?:do\s+you\s+|would\s+you\s+)?"
                      r"recommend(?:\s+instead)?|(?:gpus?|cards?)\s+instead)\b")
# a first message asking which GPU type to use ("cheapest GPU to serve X", "which GPUs can run X")
_WHICH_GPU = re.compile(
    r"\b(?:cheapest|least\s+expensive|cheapest\s+way)\b"
    r"|\b(?:smallest|cheapest|minimum|min|lowest[\s\-]end)\s+(?:gpu|card|instance|machine|hardware)\b"
    r"|\b(?:which|what)\s+(?:gpus?|cards?|hardware|hw|machines?|boxes)\s+(?:can|could|would|should|will|do\s+(?:i|we)\s+need|"
    r"to\s+(?:use|rent|buy|pick)|for)\b|\bbest\s+(?:gpu|card)\s+(?:for|to)\b"
    r"|\b(?:which|what)\s+(?:(?:aws|gcp|azure|ec2|cloud)\s+)?(?:instances?|instance\s+types?|vms?|"
    r"machine\s+types?)(?:\s+(?:on|in|at)\s+(?:aws|gcp|azure|ec2|the\s+cloud))?\s*(?:\?|$|for|to|should|would|do|can)")
# what a thread's "cheaper option?" lets go of: the GPU type, how many, and how they are split
_HARDWARE = ("gpu", "gpu_count", "nodes", "gpus_per_node", "tp", "pp", "cp", "ep")
# what a model scores, why a run's loss misbehaves, or instructions to the bot itself: questions
# that name models and runs but ask nothing fitcheck sizes
_NOT_SIZING = re.compile(
    r"\b(?:mmlu|gsm8k|humaneval|benchmarks?|leaderboard|evals?\s+scores?|scores?|accuracy|perplexity"
    r"|smarter|hallucinat\w*|loss\s+(?:(?:is\s+|keeps\s+)?(?:spik\w*|diverg\w*)|curve|is\s+nan|goes?\s+nan|explod\w*"
    r"|(?:is\s+|got\s+|gets\s+)?(?:stuck|flat|plateau\w*|not\s+(?:going\s+down|decreasing|dropping)))"
    r"|plateau\w*|overfit\w*|underfit\w*|converg\w*"
    r"|(?:spik\w*|diverg\w*|nan)\s+loss|grad(?:ient)?\s+norm|learning\s+rate\s+schedule"
    r"|ignore\s+(?:all\s+)?(?:the\s+)?(?:previous|prior|above)\s+instructions|system\s+prompt"
    r"|slack\s+token|api\s+keys?|learning\s+rate\s+(?:for|should|to\s+use)"
    # a method explained, not sized: "summarize the differences between RLHF and DPO"
    r"|(?:summari[sz]e|explain|describe)\s+(?:the\s+)?(?:differences?|how|what|why)"
    r"|(?:what(?:'s|\s+is|\s+are)\s+the\s+)?differences?\s+between\s+\w+\s+and\s+\w+\s*\??$)\b")
# a crash or a tuning question stays one with its GPU named ("NCCL timeout on our 16 h100s")
_NOT_SIZING_EVEN_WITH_GPU = re.compile(
    r"\b(?:nccl\s+(?:error|timeout)s?|runtimeerror|illegal\s+memory\s+access|segmentation\s+fault|segfault"
    r"|cuda\s+error(?!\W+out\s+of\s+memory)|best\s+(?:learning\s+rate|lr)|loss\s+(?:is\s+|keeps\s+)?spik\w*"
    # a GPU's hardware fault: "xid 79", "ecc errors", "fell off the bus"
    r"|xids?\s*\d+|(?:ecc|nvlink|pcie)\s+errors?|(?:fell|fallen|falling)\s+off\s+the\s+bus"
    r"|thermal(?:ly)?\s+throttl\w*"
    # a deployment's plumbing or the model's license: "CrashLoopBackOff", "address already in use"
    r"|crashloopbackoff|address\s+already\s+in\s+use|port\s+\d+\s+(?:is\s+)?(?:already\s+)?(?:in\s+use|taken)"
    r"|licen[cs]es?|commercial\s+use"
    # a hang, or which model is better at a task (quality, not memory)
    r"|hangs?|hanging|deadlock\w*|(?:is\s+)?stuck\s+(?:at|on|loading)"
    # latency tuning: "TTFT jumped after enabling chunked prefill, any tuning tips?"
    r"|ttft|tpot|tuning\s+tips"
    r"|better\s+(?:than\s+[\w.\-]+(?:\s+[\w.\-]+){0,3}\s+)?at\s+(?:coding|code|math|reasoning|writing"
    r"|chat|tool\s+use|function\s+calling|multilingual|translation|summari[sz]ation))\b")
# the fleet's operations with no model named: "the A100 pool is down for maintenance", "who owns
# the mi300x reservation?"
_ASKS_COUNT = re.compile(r"\bhow\s+many\b|\bdo\s+(?:we|i)\s+need\b")
_FLEET_OPS = re.compile(
    r"\b(?:down\s+for\s+maintenance|maintenance\s+window|outage|(?:is|are|went)\s+down|who\s+owns"
    r"|(?:extend|renew)\s+(?:it|the|our)\s+(?:\w+\s+)?(?:past|until|through|reservation)"
    r"|driver\s+(?:update|upgrade)|firmware|rma|warranty|melted|(?:power\s+)?connector|psu"
    # a booking's paperwork: "the reservation closes Friday, submit your node counts"
    r"|reservations?\s+(?:\w+\s+){0,5}?(?:closes?|closing|deadline|opens?|window|form)"
    r"|submit\s+your|sign[\s\-]?up\s+sheet|who\s+(?:booked|reserved|took|is\s+using|has|broke)\b"
    r"|pods?\s+(?:are\s+|is\s+)?(?:pending|evicted|crash\w*)"
    r"|booked)\b")


def _off_topic(cue: Cues, fields: dict[str, Any], low: str) -> bool:
    """A sentence that names a model but asks nothing about memory, GPUs or running it ("best
    prompt to get qwen to output json"), or a game's VRAM ("cyberpunk at 4k ultra on a 4090"):
    not a sizing question."""
    if cue.domain or cue.finetune or cue.serve or cue.train or cue.serve_setting or cue.run \
            or cue.train_knob or cue.time or cue.context or fields.keys() - {"task", "model", "params_b"}:
        return False
    return len(_WORDS.findall(low)) >= OFF_TOPIC_WORDS


def _gaming(cue: Cues, fields: dict[str, Any], low: str) -> bool:
    """A game's VRAM ("4080 super or 5080 for gaming at 4k?"), compared or not."""
    return bool(_GAMES.search(low)) and not (cue.finetune or cue.serve or cue.train
                                             or "model" in fields or "params_b" in fields)


def _not_sizing(cue: Cues, fields: dict[str, Any], low: str) -> bool:
    """Scores, loss curves, the bot's own instructions, poems: named models, nothing to size."""
    if _CREATIVE.search(low):
        return True
    if cue.memory_ask or cue.time_ask:
        return False
    return bool(_NOT_SIZING_EVEN_WITH_GPU.search(low)) or (
        bool(_NOT_SIZING.search(low)) and "gpu" not in fields) or (
        bool(_FLEET_OPS.search(low)) and not fields.keys() & {"model", "params_b", "arch"}
        and not (cue.run or cue.serve or cue.train or cue.finetune or _ASKS_COUNT.search(low)))


def _intent(cue: Cues, merged: dict[str, Any], compare_field: str | None, task: str) -> str:
    if compare_field is not None:
        return "compare"
    money_or_tokens = "tokens" in merged or "price_per_gpu_hour" in merged
    if task != "infer" and ((money_or_tokens and not (cue.memory_ask and not cue.time_ask))
                            or (cue.time_ask and not cue.memory_ask)):
        return "time_cost"
    return task
