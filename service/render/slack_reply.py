"""The text the bot posts (Slack mrkdwn), read in five seconds: the verdict first (for a time or
cost question, the days and dollars first), the layout, one line of per-GPU components in GB
against one budget figure, per-sequence figures when serving, then what you said and what was
assumed, told apart. ``safe`` escapes ``&``, ``<``, ``>`` and drops broadcast words, so nothing
in a reply can ping a channel or break formatting."""

from __future__ import annotations

import re
from dataclasses import fields

from service.core.job.assumptions import Assumption
from service.core.memory.model_state import REFERENCE_NOTE
from service.core.report.answer_types import (
    Answer,
    FormulaEntry,
    LayoutEntry,
    PerGpuBytes,
    PlannerEntry,
    ServingCostEntry,
)
from service.core.report.headline import fix_label, own_figures, own_layout_label, speaks_of_planner
from service.core.units import GB, counted, gb, gib, human_count
from service.render.assumption_text import short_assumption
from service.render.cli_text import layout_text
from service.render.slack_time import time_line

_SHORT = {"weights": "weights", "gradients": "grads", "optimizer": "optimizer",
          "activations": "activations", "kv_cache": "KV cache", "temporary": "temp",
          "overhead": "overhead"}
_BROADCAST = re.compile(r"@(?:channel|here|everyone)\b|<!\w+[^>]*>", re.I)
HELP = (
    "*Ask me whether a model fits, and on how many GPUs.* For example:\n"
    "• `7B, seq 4096, ZeRO-3, A100 40GB?`\n"
    "• `can i qlora llama-3.1-8b on one 4090?`\n"
    "• `serving llama-3.1-70b at 16k context for 50 users, how many h100s?`\n"
    "• `days to pretrain a 30B on 3T tokens with 1024 H200s`\n"
    "• `zero-2 or zero-3 for llama 3 70b on 16 h100s?` • `A100 80GB vs H100 for mistral 7b`\n"
    "• a custom model: `48 layers, d_model 6144, 48 heads, 8 kv heads, vocab 100k`, or paste its "
    "Hugging Face config.json\n"
    "• or paste your TrainingArguments / Megatron flags / DeepSpeed JSON / vllm serve line.\n"
    "In a thread, follow up with `what about seq 8192?` or `and with zero-2?`."
)
HOW_TO_ASK = "Ask like `llama-3-8b, seq 4096, ZeRO-3, 8x A100 40GB` (or say `help`)."
MAX_ASSUMED = 700


def safe(text: str) -> str:
    """Slack mrkdwn-safe: no broadcasts, ``&``/``<``/``>`` escaped, no strike-through tildes."""
    text = _BROADCAST.sub("", text)
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace("~", "≈")


def plain(text: str) -> str:
    return safe(text)


def short_gpu(name: str) -> str:
    return name.replace("NVIDIA ", "").replace("GeForce ", "").replace("AMD Instinct ", "")


def budget_figure(answer: Answer) -> tuple[int | None, str]:
    """The one figure the per-GPU total is held against: the planner's budget, else (no
    planner, or a verdict on the stated layout) the GPU's usable memory."""
    stated_verdict = answer.planner is not None and answer.planner.mode == "given" \
        and answer.task != "infer" and not speaks_of_planner(answer)
    if answer.planner is not None and not stated_verdict:
        return answer.planner.budget_bytes, "budget"
    return answer.gpu_usable_bytes, "usable"  # "Fits as stated": against what the GPU has


def components_line(per: PerGpuBytes, budget: int | None, kind: str) -> str:
    parts = [f"{_SHORT[f.name]} {getattr(per, f.name) / 1e9:,.1f}" for f in fields(per)
             if f.name != "total" and getattr(per, f.name)]
    line = "Per GPU (GB): " + " · ".join(parts) + f" = *{gb(per.total)}* ({gib(per.total)})"
    if budget:
        line += f" of a {gb(budget)} budget" if kind == "budget" else f" of {gb(budget)} usable"
    return line


def band_line(answer: Answer) -> str:
    """'Likely 33.0-39.3 GB per GPU: the measured error of 53 runs like it (H100)'."""
    band = answer.error_band
    if band.runs:
        basis = f"the error measured on {band.runs} {band.kind} runs"
    else:
        basis = "a stated ±20%: no measured runs of this kind yet"
    return f"Likely {band.low_bytes / 1e9:,.1f}-{band.high_bytes / 1e9:,.1f} GB per GPU ({basis})"


# a step this much slower than the ideal is what a run would notice first: said beside the fit
SLOW_STEP = 2.0


def slow_line(planner: PlannerEntry | None) -> str | None:
    """'Slow: step time x51.5 the ideal (data-parallel ZeRO-3 communication x34.5, ...)': a
    layout that fits the memory but that the step-time model rates as far from the ideal
    (DeepSeek-V3's fewest H100s: ZeRO-3 gathering the experts for every micro-batch)."""
    if planner is None or not planner.fits or not planner.relative_step_time \
            or planner.relative_step_time < SLOW_STEP:
        return None
    terms = sorted(planner.step_terms.items(), key=lambda t: -t[1])[:3]
    why = ", ".join(f"{name} x{factor:.2f}" for name, factor in terms)
    return (f"Slow: step time x{planner.relative_step_time:.1f} an ideal step ({why}). It fits "
            "the memory, but a run would crawl: more GPUs, for a layout that needs less of "
            "that, run faster")


def serving_cost_line(cost: ServingCostEntry) -> str:
    """'Cost: 8 GPUs x $2.99/h = *$23.92/h*, ≈$17,462 a month (730 h; catalog price)'."""
    whose = "your price" if cost.price_stated else "catalog on-demand price"
    return (f"Cost: {counted(cost.gpus, 'GPU')} x ${cost.price_per_gpu_hour_usd:,.2f}/h = "
            f"*${cost.per_hour_usd:,.2f}/h*, ≈${cost.per_month_usd:,.0f} a month "
            f"({cost.hours_per_month:,.0f} h; {whose})")


def _model_kv_per_token(answer: Answer) -> float | None:
    """The whole model's attention KV bytes per token (the kv_cache formula's own term, before
    the tensor-parallel share and the pipeline split)."""
    planner = answer.planner
    formulas = planner.layout.formulas if planner is not None and planner.layout is not None \
        else answer.formulas
    found = next((f.terms.get("kv_bytes_per_token") for f in formulas
                  if f.component == "kv_cache"), None)
    return float(found) if isinstance(found, int | float) else None


def serving_line(answer: Answer, shown: LayoutEntry | None = None,
                 kv_bytes: int | None = None) -> str | None:
    """KV per sequence and the room for sequences, of the layout the reply shows (``shown``,
    with its KV bytes: the planner's on the given GPUs; else the request's)."""
    if answer.task != "infer":
        return None
    plan = shown if shown is not None else answer.plan
    per_seq: object = answer.details.get("kv_bytes_per_sequence")
    if shown is not None and kv_bytes is not None and plan.sequences:
        per_seq = kv_bytes / -(-plan.sequences // max(1, plan.dp))  # a replica's share
    parts = []
    if isinstance(per_seq, int | float) and plan.context:
        size = gb(per_seq) if per_seq >= 0.1 * GB else f"{per_seq / 1e6:,.0f} MB"  # not "0.0 GB"
        whole = _model_kv_per_token(answer) if plan.tp * plan.pp > 1 else None
        model = f"; {whole / 1e3:,.1f} KB per token for the whole model" if whole else ""
        parts.append(f"KV cache per sequence per GPU {size} "
                     f"({per_seq / plan.context / 1e3:,.1f} KB per token{model})")
    room = plan.max_concurrent_sequences
    if room is None and shown is None:
        found = answer.details.get("max_concurrent_sequences")
        room = int(found) if isinstance(found, int | float) else None
    if room is not None:
        parts.append(f"room for {counted(room, 'concurrent sequence')} at {plan.context:,} tokens"
                     + (f" on {plan.dp} attention ranks" if plan.dp > 1 and plan.ep > 1
                        else f" on {plan.dp} replicas" if plan.dp > 1 else ""))
        if room and plan.context:  # vLLM pages the cache: shorter sequences share these tokens
            parts.append(f"{human_count(room * plan.context)} tokens of KV cache in all "
                         "(more sequences when they are shorter)")
    engine = answer.planner.stack if answer.planner is not None else ""
    if engine in PREALLOCATING:  # what nvidia-smi shows is the budget, not the breakdown's total
        parts.append(f"{PREALLOCATING[engine]} takes its whole budget at start (what nvidia-smi "
                     "shows); the KV cache gets what the weights leave")
    return " · ".join(parts) if parts else None


PREALLOCATING = {"vllm": "vLLM", "sglang": "SGLang"}  # engines that reserve the KV pool up front


LAYOUT_FIELDS = frozenset({"zero_stage", "tp", "pp", "cp", "ep", "recompute", "micro_batch",
                           "sequence_parallel", "offload", "framework", "plan.tensor_parallel"})


def _shape(plan: LayoutEntry) -> tuple[int, int, int]:
    return plan.gpus, plan.tp, plan.pp


def _planner_shown(answer: Answer) -> bool:
    """On given GPUs, whether the reply shows the planner's layout there rather than the
    request's: training where the verdict is the planner's (``speaks_of_planner``), serving
    where the planner splits the GPUs otherwise."""
    planner = answer.planner
    if planner is None or planner.mode != "given" or planner.layout is None:
        return False
    if answer.task == "infer":
        return _shape(planner.layout.plan) != _shape(answer.plan)
    return speaks_of_planner(answer)


def _verdict(answer: Answer) -> str:
    if answer.gpu is None and answer.planner is None:
        return (f"{answer.model} needs {gb(answer.per_gpu_bytes.total)} per GPU as stated. "
                "Name a GPU (e.g. `on 8x H100`) to see how many you need")
    return short_gpu(answer.verdict)


def assumptions_lines(notes: list[str], assumptions: list[Assumption]) -> list[str]:
    """'You said: ...' and 'Assumed: ...': the settings that matter, stated and not, apart."""
    said = [short_assumption(a) for a in assumptions if a.origin == "stated"]
    assumed = [short_assumption(a) for a in assumptions if a.origin != "stated" and not a.minor]
    text = " · ".join(dict.fromkeys([*notes, *assumed]))
    if len(text) > MAX_ASSUMED:
        text = text[:MAX_ASSUMED - 3] + "..."
    lines = [f"_Assumed:_ {text} · GB = 10^9 bytes" if text else "_GB = 10^9 bytes_"]
    if said:
        lines.append("_You said:_ " + " · ".join(dict.fromkeys(said)))
    return lines


def _count_stated(answer: Answer) -> bool:
    return any(a.field == "gpu_count" and a.origin == "stated" for a in answer.assumptions) \
        or (answer.planner is not None and answer.planner.mode == "given")


def reference_line(formulas: list[FormulaEntry], total: int) -> str | None:
    """DPO, IPO, KTO: what the frozen reference model costs ("does the ref model double it?")."""
    held = sum(f.bytes for f in formulas if f.note == REFERENCE_NOTE)
    if not held:
        return None
    return (f"Reference model: {gb(held)} of the {gb(total)} per GPU: a frozen copy of the weights, with no "
            "gradients or optimizer state, so far less than double; TRL's "
            "`precompute_ref_log_probs=True` scores it once before training and drops it.")


def estimate_reply(answer: Answer, notes: list[str], ignored: list[str] | None = None,
                   time_first: bool = False) -> str:
    """The reply for one answered request; ``notes``: how the question was read; ``time_first``:
    a time or cost question, whose days and dollars lead."""
    lines = [f"*{_verdict(answer)}*"]
    if answer.compute is not None:
        lines.insert(0 if time_first else 1, time_line(answer.compute, _count_stated(answer),
                                                         answer.fits is not False,
                                                         answer.gpu is not None))
    planner = answer.planner
    # on the given GPUs where the stated layout does not fit (serving: where the planner splits
    # them otherwise), the verdict (and its band) is the planner's layout there: the one that
    # fits, or the leanest; the stated one comes after
    replanned = _planner_shown(answer)
    per, budget, kind = answer.per_gpu_bytes, *budget_figure(answer)
    shown: LayoutEntry | None = None
    if replanned and planner is not None and planner.layout is not None:
        name = "Layout that fits" if planner.fits else "Leanest layout"
        lines.append(f"{name}: {layout_text(planner.layout.plan)}")
        per = planner.layout.per_gpu_bytes
        shown = planner.layout.plan
    elif answer.task != "infer" and (answer.gpu is not None or answer.plan.gpus > 1):
        lines.append(f"Layout: {layout_text(answer.plan)}")
    lines.append(components_line(per, budget, kind))
    if answer.task != "infer" and "optimizer" in answer.peak_phase \
            and shown is None:  # why a training breakdown has (next to) no activations
        lines[-1] += " (peak at the optimizer step, once the saved activations are freed)"
    elif answer.task != "infer" and answer.params_trainable * 2 > answer.params_total \
            and not per.gradients:  # full training, not adapters: gradients are expected
        lines[-1] += " (the peak comes before any gradient is allocated)"  # not forgotten
    lines.append(band_line(answer))
    if answer.cpu_offload_bytes:  # host RAM the offload needs (the verdict's layout's)
        layout = shown or answer.plan
        per_node = layout.gpus // max(1, layout.nodes)  # host RAM is a node's
        lines.append(f"CPU memory for the offload: {gb(answer.cpu_offload_bytes)} per GPU "
                     f"(host RAM, pinned), {gb(answer.cpu_offload_bytes * per_node)} for a node's "
                     f"{counted(per_node, 'GPU')}")
    own = own_figures(answer)
    if replanned and per.total != own.per_gpu_bytes.total:
        written = "As written" if own_layout_label(answer) == "As stated" else "The default layout"
        # against the budget the line above was (serving: vLLM's share of the memory)
        over = own.per_gpu_bytes.total > budget if budget else own.fits is False
        lines.append(f"{written} ({layout_text(own.plan)}) would need "
                     f"{gb(own.per_gpu_bytes.total)} per GPU"
                     + (": over." if over else ", which also fits."))
    limit = next((a for a in answer.assumptions if a.field == "context_limit"), None)
    if limit is not None:  # past what the model was trained for: said up front, not in passing
        lines.insert(1, f"Note: {limit.why}")
    reference = reference_line(planner.layout.formulas if shown is not None and planner is not None
                               and planner.layout is not None else answer.formulas, per.total)
    if reference:
        lines.append(reference)
    slow = slow_line(planner)
    if slow:
        lines.append(slow)
    serving = serving_line(answer, shown, per.kv_cache)
    if serving:
        lines.append(serving)
    if answer.serving_cost is not None:
        lines.append(serving_cost_line(answer.serving_cost))
    if answer.task == "infer" and planner is not None and planner.fits and planner.alternatives:
        alt = planner.alternatives[0]  # the same node without pipeline stages
        lines.append(f"Or {alt.gpus} GPUs as {alt.layout}: {alt.reason}")
    if planner is not None and not planner.fits and planner.fix is not None:
        lines.append(f"{fix_label(answer)}: {short_gpu(planner.fix.change)} ({planner.fix.note})")
        lines += [f"  or: {short_gpu(f.change)} ({f.note})" for f in planner.other_fixes]
    if planner is not None and planner.stack_name and answer.task != "infer":
        lines.append(f"Stack: {planner.stack_name}")
    if ignored:
        lines.append("I did not use: " + ", ".join(f"`{i}`" for i in ignored))
    assumed = answer.assumptions
    if shown is not None or (planner is not None and planner.mode == "fewest"):
        # the layout shown is the planner's: the request's own layout defaults would contradict it
        hidden = LAYOUT_FIELDS - ({"framework"} if answer.task == "infer" else set())  # no Stack line
        assumed = [a for a in assumed if a.origin == "stated" or a.field not in hidden]
    lines += assumptions_lines(notes, assumed)
    return safe("\n".join(lines))
