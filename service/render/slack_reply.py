"""The text the bot posts (Slack mrkdwn): verdict first, per-GPU figures in GB, time and cost
when asked, the assumptions in one line. ``safe`` escapes ``&``, ``<``, ``>`` and drops
broadcast words, so nothing in a reply can ping a channel or break formatting."""

from __future__ import annotations

import re
from typing import Any

from service.core.memory.breakdown import COMPONENT_KEYS, Estimate
from service.core.planning.plan_types import Plan
from service.core.units import gb, gib
from service.parser.types import Parsed

_SHORT = {"weights": "weights", "gradients": "grads", "optimizer": "optimizer",
          "activations": "activations", "kv_cache": "KV cache", "temporary": "temp",
          "overhead": "overhead"}
_WHAT = {"train": "training", "finetune": "fine-tuning", "infer": "serving"}
_SKIP = ("task:", "plan to ", "GPU counts:", "layouts ranked", "tensor parallelism only",
         "activation profile", "CPU offload only", "global batch not stated", "overhead:",
         "each GPU type:", "DeepSpeed-style accounting", "tensor parallelism inside one node")
_RENAME = (
    (re.compile(r"^sequence length (\d+) tokens$"), r"seq \1"),
    (re.compile(r"^bf16 mixed precision with fp32 master weights$"), "bf16 mixed (fp32 master weights)"),
    (re.compile(r"^AdamW \(fp32 moments\)$"), "AdamW"),
    (re.compile(r"^FlashAttention / SDPA on.*$"), "FlashAttention on"),
    (re.compile(r"^ZeRO stage 0.*$"), "ZeRO-0 (plain DDP)"),
    (re.compile(r"^MFU (\d+%).*$"), r"MFU \1"),
    (re.compile(r"^\$([\d.]+) per GPU-hour.*$"), r"$\1/GPU-hour"),
    (re.compile(r"^time on (.+) \(no GPU given\)$"), r"time on \1"),
    (re.compile(r"^(\S+) → no standard model[^:]*: ([^,]*, [^,]*),.*$"), r"\1 = Llama-style shape, \2"),
    (re.compile(r"^(\S+) → ([^:;]*).*$"), r"\1 = \2"),
    (re.compile(r"^vLLM-style budget: gpu_memory_utilization (\d+%).*$"), r"vLLM gpu_memory_utilization \1"),
    (re.compile(r"^KV cache counted as whole sequences.*$"), "KV cache for every sequence at full context"),
)
_BROADCAST = re.compile(r"@(?:channel|here|everyone)\b|<!\w+[^>]*>", re.I)
HELP = (
    "*Ask me whether a model fits, and on how many GPUs.* For example:\n"
    "• `7B, seq 4096, ZeRO-3, A100 40GB?`\n"
    "• `can i qlora llama-3.1-8b on one 4090?`\n"
    "• `serving llama-3.1-70b at 16k context for 50 users, how many h100s?`\n"
    "• `days to pretrain a 30B on 3T tokens with 1024 H200s`\n"
    "• `zero-2 or zero-3 for llama 3 70b on 16 h100s?` • `A100 80GB vs H100 for mistral 7b`\n"
    "• a custom model: `48 layers, d_model 6144, 48 heads, 8 kv heads, vocab 100k`\n"
    "• or paste your TrainingArguments / Megatron flags / DeepSpeed JSON.\n"
    "In a thread, follow up with `what about seq 8192?` or `and with zero-2?`."
)
HOW_TO_ASK = "Ask like `llama-3-8b, seq 4096, ZeRO-3, 8x A100 40GB` (or say `help`)."


def safe(text: str) -> str:
    """Slack mrkdwn-safe: no broadcasts, ``&``/``<``/``>`` escaped, no strike-through tildes."""
    text = _BROADCAST.sub("", text)
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace("~", "≈")


def short_gpu(name: str) -> str:
    return name.replace("NVIDIA ", "").replace("GeForce ", "").replace("AMD Instinct ", "")


def compact(assumptions: list[str]) -> list[str]:
    """The engine's assumptions, shortened for one chat line."""
    out: list[str] = []
    for note in assumptions:
        if note.startswith(_SKIP):
            continue
        for pattern, repl in _RENAME:
            if pattern.match(note):
                note = pattern.sub(repl, note)
                break
        note = note if len(note) <= 90 else note[:87] + "..."
        if note not in out:
            out.append(note)
    return out


def breakdown(per_gpu: dict[str, int], capacity: int | None) -> str:
    parts = [f"{_SHORT[k]} {per_gpu[k] / 1e9:,.1f}" for k in COMPONENT_KEYS if per_gpu.get(k)]
    total = per_gpu.get("total", 0)
    line = "Per GPU (GB): " + " · ".join(parts) + f" = *{gb(total)}* ({gib(total)})"
    if capacity:
        line += f" of {gb(capacity)} usable"
    return line


def _verdict(est: Estimate, plan: Plan | None) -> str:
    if plan is not None and plan.verdict:
        return short_gpu(plan.verdict)
    lay = est.layout
    gpus = int(lay.get("gpus", 1))
    setup = f"{gpus} GPU" + ("s" if gpus != 1 else "")
    if est.task != "infer" and lay.get("zero_stage"):
        setup += f", ZeRO-{lay['zero_stage']}"
    return (f"{est.model_id} {_WHAT.get(est.task, est.task)} needs {gb(est.total_bytes)} per GPU "
            f"({setup}). Name a GPU (e.g. `on 8x H100`) to see how many you need")


def _as_written(est: Estimate) -> str:
    lay = est.layout
    return (f"ZeRO-{lay.get('zero_stage', 0)}, recompute {lay.get('recompute', 'none')}, "
            f"micro-batch {lay.get('micro_batch', 1)}")


def _compute_line(est: Estimate, plan: Plan | None) -> str | None:
    comp = plan.compute if plan is not None and plan.compute is not None else est.compute
    if comp is None:
        return None
    gpus = plan.gpus if plan is not None and plan.compute is not None and plan.gpus else \
        int(est.layout.get("gpus", 1))
    cost = f" · ≈${comp.cost:,.0f}" if comp.cost is not None else ""
    plural = "s" if gpus != 1 else ""
    return (f"Time: *{comp.days:,.1f} days* on {gpus:,} GPU{plural} · {comp.gpu_hours:,.0f} GPU-hours{cost}"
            f" · {comp.total_flops:.2g} FLOPs")


def _serving_line(est: Estimate, plan: Plan | None, stated: object = None) -> str | None:
    if est.task != "infer":
        return None
    details: dict[str, Any] = plan.serving if plan is not None and plan.serving else dict(est.extra)
    per_seq = details.get("kv_per_sequence_bytes", details.get("kv_bytes_per_sequence"))
    room = details.get("max_concurrent_sequences")
    parts = []
    context = details.get("context") or (stated if isinstance(stated, int) else parsed_context(est))
    if isinstance(per_seq, int | float):
        per_token = f" ({per_seq / context / 1e3:,.1f} KB per token)" if context else ""
        parts.append(f"KV cache {gb(per_seq)} per sequence{per_token}")
    if isinstance(room, int):
        parts.append(f"room for {room:,} concurrent sequences")
    return " · ".join(parts) if parts else None


def parsed_context(est: Estimate) -> int | None:
    """The context of a serving estimate without a plan (its assumption or the stated seq)."""
    for note in est.assumptions:
        m = re.match(r"^sequence length (\d+) tokens", note)
        if m:
            return int(m.group(1))
    return None


def _serving_split(plan: Plan | None) -> dict[str, int] | None:
    """Per-GPU figures of a serving plan's layout when the planner kept no estimate for it (PP > 1)."""
    if plan is None or plan.estimate is not None or not plan.serving:
        return None
    s = plan.serving
    try:
        kv = int(s["kv_per_sequence_bytes"]) * int(s["sequences"])
        return {"weights": int(s["weights_bytes"]), "activations": int(s["workspace_bytes"]),
                "kv_cache": kv, "overhead": int(s["fixed_bytes"]), "total": int(s["per_gpu_total"])}
    except (KeyError, TypeError, ValueError):
        return None


def estimate_reply(parsed: Parsed, est: Estimate, plan: Plan | None) -> str:
    """The reply for one answered request."""
    lines = [f"*{_verdict(est, plan)}*"]
    shown = plan.estimate if plan is not None and plan.estimate is not None else est
    if plan is not None and plan.layout is not None and est.task != "infer":
        title = "Layout" if plan.fits else "Leanest layout tried"
        lines.append(f"{title}: {plan.layout.describe()} ({plan.layout.shape()})")
    split = _serving_split(plan) if est.task == "infer" else None
    capacity = plan.capacity_bytes if plan is not None else shown.capacity_bytes
    lines.append(breakdown(split, capacity) if split else
                 breakdown(shown.per_gpu_bytes, shown.capacity_bytes))
    if plan is not None and plan.fits and est.fits is False and plan.mode == "given":
        lines.append(f"As written ({_as_written(est)}) it would need {gb(est.total_bytes)} per GPU: "
                     "over, hence the layout above.")
    for extra in (_serving_line(est, plan, parsed.merged.get("seq_len")), _compute_line(est, plan)):
        if extra:
            lines.append(extra)
    if plan is not None and not plan.fits and plan.fix is not None and "fix" not in plan.verdict:
        lines.append(f"Cheapest fix: {short_gpu(plan.fix.change)} ({plan.fix.note})")
    notes = plan.assumptions if plan is not None else est.assumptions
    lines.append(assumptions_line(parsed, notes, _micro_batch(parsed, est, plan)))
    return safe("\n".join(lines))


def _micro_batch(parsed: Parsed, est: Estimate, plan: Plan | None) -> list[str]:
    """The micro-batch default, said even when the planner's layout line shows it."""
    if est.task == "infer" or "micro_batch" in parsed.merged:
        return []
    micro = plan.layout.micro_batch if plan is not None and plan.layout is not None \
        else est.layout.get("micro_batch", 1)
    return [f"micro-batch {micro} per GPU"]


def _serving_defaults(parsed: Parsed) -> list[str]:
    if parsed.merged.get("task") != "infer":
        return []
    out = []
    stated = parsed.merged.keys() | {parsed.compare_field}
    if "quantization" not in stated:
        out.append("16-bit weights")
    if "kv_cache_dtype" not in stated:
        out.append("KV cache in the model's dtype")
    if not stated & {"concurrent", "batch"}:
        out.append("1 sequence at a time")
    return out


def assumptions_line(parsed: Parsed, engine_notes: list[str], extra: list[str] | None = None) -> str:
    notes = list(parsed.notes) + _serving_defaults(parsed) + (extra or []) + compact(engine_notes)
    text = " · ".join(dict.fromkeys(notes))
    if len(text) > 700:
        text = text[:697] + "..."
    return f"_Assumed:_ {text} · GB = 10^9 bytes" if text else "_GB = 10^9 bytes_"


def plain(text: str) -> str:
    return safe(text)
