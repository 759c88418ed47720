"""Answering one chat message: parse it into a request, answer the request on the same road as
``POST /v1/estimate`` (registered models, the caches, the metrics), and write the reply."""

from __future__ import annotations

import contextlib
import re
from dataclasses import replace
from typing import Any

from service.asking.accumulation_tip import accumulation_tip
from service.asking.ask_types import AskAnswer, CompareSide, Comparison, Refused
from service.asking.cheaper_weights import cheaper_weights
from service.asking.deadline_fit import deadline_fit
from service.asking.draft_cost import draft_line
from service.asking.hourly_cost import hourly_line
from service.asking.largest_fit import limit_line, serving_context
from service.asking.largest_model import largest_model
from service.asking.leading_lines import kv_line, observed_line
from service.asking.method_options import cheaper_methods
from service.asking.rl_colocate import colocate_line
from service.core.errors import InvalidInput, UnknownName
from service.core.hardware.gpus import find_gpu
from service.core.job.request import EstimateRequest, request_fields
from service.core.report.answer_types import Answer, FixEntry
from service.estimates import Estimates
from service.parser.assemble import GROUP_RL_SCOPE
from service.parser.normalize import safe_echo
from service.parser.parse import parse
from service.parser.rules import invalid_sentence
from service.parser.types import Parsed
from service.permalink import link, normalise
from service.render import slack_reply as reply
from service.render.slack_cheapest import cheapest_entry, cheapest_reply
from service.render.slack_compare import Side, compare_reply
from service.work_pool import PoolBusy

FALLBACK = "Sorry, I couldn't work that one out. " + reply.HOW_TO_ASK
MODEL_FIELDS = ("model", "params_b", "arch")


class Asker:
    """Answers chat questions through one ``Estimates`` (shared with the REST routes)."""

    def __init__(self, estimates: Estimates, base_url: str) -> None:
        self.estimates = estimates
        self.base_url = base_url

    async def ask(self, text: object, previous: dict[str, Any] | None = None) -> AskAnswer:
        """Parse, estimate and reply; every failure becomes a friendly reply, except a full
        planner queue (``PoolBusy``), which the API answers 503 with Retry-After."""
        try:
            registered = await self.estimates.registry.ids()
            result = await self._ask(with_registered(parse(text, previous), text, registered))
        except PoolBusy:
            raise  # the planner's queue is full: a 503 with Retry-After, not "couldn't work out"
        except Exception:
            return AskAnswer("invalid", {}, None, reply.plain(FALLBACK))
        if result.link is None and result.parsed:
            result = replace(result, link=self._link(result.parsed))
        return result

    def _link(self, parsed: dict[str, Any]) -> str | None:
        """The permalink of what was understood, even when it could not be answered."""
        stated = {k: v for k, v in parsed.items() if k in request_fields() and v is not None}
        try:
            return link(self.base_url, normalise(EstimateRequest(**stated))) if stated else None
        except (InvalidInput, UnknownName, TypeError, ValueError):
            return None

    async def launch_for(self, answer: Answer, tool: str, merged: dict[str, Any]) -> str:
        """The launch config asked for; where the plan does not fit as asked but its first fix
        on the same GPUs does, that fix's config, said so ("give me the deepspeed config" after
        "0.7 GB short, fix: micro-batch 1 x 2 accumulation")."""
        fix = None if answer.launch else fix_of(answer)
        if fix is not None:
            with contextlib.suppress(Refused):
                fixed = await self.answer_fields({**merged, **fix.changes})
                if fixed.launch:
                    said = f"As asked it does not fit; with the fix ({fix.change}):"
                    return "\n" + reply.plain(said) + launch_text(fixed, tool)
        return launch_text(answer, tool)

    async def answer_fields(self, fields: dict[str, Any], fits_on: bool = False) -> Answer:
        """The answer for parsed fields (``fits_on``: with the table of every GPU type);
        ``Refused`` when the engine cannot answer them."""
        try:
            request = EstimateRequest(**{k: v for k, v in fields.items() if k in request_fields()})
            return await self.estimates.answer(request, self.base_url, fits_on=fits_on)
        except InvalidInput as exc:
            field = exc.field.split(".", 1)[0]
            raise Refused(invalid_sentence(exc), field if field in request_fields() else None,
                          False) from exc
        except UnknownName as exc:
            raise Refused(unknown_sentence(exc), "model" if exc.kind == "model" else "gpu",
                          True) from exc

    async def _ask(self, p: Parsed) -> AskAnswer:
        notes = list(p.notes)
        ignored = list(p.ignored)
        if p.intent == "help":
            return AskAnswer("help", p.merged, None, reply.plain(reply.HELP))
        if p.problem is not None:
            text = f"{p.problem} {reply.HOW_TO_ASK}"
            if p.hardware_problem and _has_model(p):  # what the job needs on a GPU, for scale
                gpu_free = {k: v for k, v in p.merged.items() if k not in ("gpu", "gpu_count", "nodes")}
                with contextlib.suppress(Refused):
                    answer = await self.answer_fields(gpu_free)
                    text = (f"{p.problem}\nFor scale, on a GPU: "
                            f"{reply.estimate_reply(answer, list(p.notes))}")
            return AskAnswer("invalid", p.merged, None, reply.plain(text))
        if p.clarify is not None and (p.unknown is not None or not _has_model(p)):
            return AskAnswer(p.intent, p.merged, None, reply.plain(p.clarify), p.clarify, notes)
        if p.intent == "compare":
            return await self._compare(p, notes)
        largest = await largest_model(self.answer_fields, p.merged) \
            if p.maximize == "model" else None
        if largest is not None:  # the answer is for the largest model that fits
            p = replace(p, merged=largest.fields)
        try:
            answer = await self.answer_fields(p.merged, fits_on=p.cheapest)
        except Refused as exc:
            parsed = {k: v for k, v in p.merged.items() if k != exc.field}
            if exc.unknown:
                return AskAnswer(p.intent, parsed, None, reply.plain(exc.sentence), exc.sentence,
                                 notes)
            return AskAnswer("invalid", parsed, None,
                             reply.plain(f"{exc.sentence} {reply.HOW_TO_ASK}"), None, notes)
        if p.defaulted:  # what the parser filled in is not what the user said (its note says it)
            answer = replace(answer, assumptions=[
                replace(a, origin="default", minor=True)
                if a.field in p.defaulted and a.origin == "stated" else a
                for a in answer.assumptions])
        longest = await serving_context(self.answer_fields, p.merged, answer) \
            if p.maximize == "seq_len" and answer.task == "infer" else None
        if longest is not None and longest.answer is not None and longest.fields is not None:
            answer, p = longest.answer, replace(p, merged=longest.fields)
        prefix = ""
        if p.deadline_hours is not None:  # "in 7 days": the count that finishes in time
            deadline = await deadline_fit(self.answer_fields, p.merged, answer, p.deadline_hours)
            answer = deadline.answer or answer
            prefix = reply.plain(deadline.line) + "\n" if deadline.line else ""
        text = prefix + (cheapest_reply(answer, notes, p.cloud) if p.cheapest else
                         reply.estimate_reply(answer, notes, ignored,
                                              time_first=p.intent == "time_cost"))
        if p.scope is not None:  # right under the headline
            head, _, rest = text.partition("\n")
            if head.endswith("*"):
                head = head[:-1] + f" ({p.scope.headline})*"
            text = head + "\n" + reply.plain(p.scope.line) + ("\n" + rest if rest else "")
        seen = observed_line(p.observed_gb, answer) if p.observed_gb is not None else \
            kv_line(answer) if p.kv_asked and answer.task == "infer" else None
        if seen:  # what the question is about leads
            text = reply.plain(seen) + "\n" + text
        hourly = hourly_line(p.merged, answer) if p.hourly else None
        text += "\n" + reply.plain(hourly) if hourly else ""
        if p.scope is GROUP_RL_SCOPE:  # GRPO/RLOO: where the rollout engine fits beside it
            colocated = colocate_line(answer)
            text += "\n" + reply.plain(colocated) if colocated else ""
        text += await self._qlora_tip(p, answer)
        weights = await cheaper_weights(self.answer_fields, p.merged, answer) \
            if p.cheaper else None
        text += "\n" + reply.plain(weights) if weights else ""
        tip = await accumulation_tip(self.answer_fields, p.merged, answer)
        text += "\n" + reply.plain(tip) if tip else ""
        if p.draft is not None:
            drafted = await draft_line(self.answer_fields, p.draft, p.merged, answer)
            text += "\n" + reply.plain(drafted) if drafted else ""
        if p.cheapest:
            methods = await cheaper_methods(self.answer_fields, p.merged, p.cloud)
            if methods:
                text += "\n" + reply.plain(methods)
        limit = largest.line if largest is not None else longest.line if longest is not None \
            else await limit_line(self.answer_fields, p.maximize, p.merged, answer) \
            if p.maximize else None
        if limit:
            text += "\n" + reply.plain(limit)
        if p.launch_asked is not None:
            text += await self.launch_for(answer, p.launch_asked, p.merged)
        if p.clarify is not None:
            text += "\n" + reply.plain(p.clarify)
        parsed = p.merged
        best = cheapest_entry(answer, p.cloud) if p.cheapest else None
        if best is not None and best.gpus:  # the thread goes on with the option it led with
            parsed = {**p.merged, "gpu": best.gpu, "gpu_count": best.gpus}
        return AskAnswer(p.intent, parsed, answer, text, p.clarify, notes, None, ignored,
                         answer.link)

    async def _qlora_tip(self, p: Parsed, answer: Answer) -> str:
        """LoRA that does not fit the stated GPUs: say whether QLoRA (4-bit base) would."""
        planner = answer.planner
        if p.merged.get("finetune_method") != "lora" or planner is None or planner.fits:
            return ""
        try:
            alt = await self.answer_fields({**p.merged, "finetune_method": "qlora",
                                            "quantization": "nf4"})
        except Refused:
            return ""
        if alt.planner is None or not alt.planner.fits or alt.planner.layout is None:
            return ""
        need = alt.planner.layout.per_gpu_bytes.total / 1e9
        return "\n" + reply.plain(f"Tip: QLoRA (4-bit NF4 base) fits here: {need:,.1f} GB per GPU.")

    async def _compare(self, p: Parsed, notes: list[str]) -> AskAnswer:
        sides: list[Side] = []
        variants: list[CompareSide] = []
        for variant in p.compare:
            fields = {**p.merged, **variant.changes}
            try:
                answer: Answer | None = await self.answer_fields(fields)
                error = None
            except Refused as exc:
                answer, error = None, exc.sentence
            sides.append(Side(variant.label, answer, error, *_speeds(fields.get("gpu"))))
            variants.append(CompareSide(variant.label, variant.changes, answer, error))
        answered = next((v for v in variants if v.answer is not None), None)
        if answered is None or answered.answer is None:
            text = f"{sides[0].error if sides else FALLBACK} {reply.HOW_TO_ASK}"
            return AskAnswer("invalid", p.merged, None, reply.plain(text), None, notes)
        # a follow-up goes on from the first side answered, and so does the link
        first, parsed = answered.answer, {**p.merged, **answered.changes}
        return AskAnswer("compare", parsed, first,
                         compare_reply(p.compare_field, sides, notes, p.cloud), p.clarify, notes,
                         Comparison(p.compare_field, variants), None, first.link)


def fix_of(answer: Answer) -> FixEntry | None:
    """The planner's first fix that keeps the GPUs asked about (a knob or a serving change)."""
    planner = answer.planner
    fix = planner.fix if planner is not None else None
    return fix if fix is not None and fix.kind in ("knob", "serving") and fix.changes else None


def launch_text(answer: Answer, tool: str) -> str:
    """The launch config asked for ("and the vllm command?"), as a code block: the tool named,
    else the plan's first (said so when the tool named has none); none when the plan has none
    (it does not fit)."""
    configs = answer.launch
    config = configs.get(tool) if tool else None
    said = ""
    if config is None:
        config = next(iter(configs.values()), None)
        if config is None:
            return "\n" + reply.plain("No launch config: the plan does not fit as it is")
        if tool:
            said = "\n" + reply.plain(f"No {tool} config for this plan; its {config.tool} one:")
    command = f"\n{config.command}" if config.command else ""
    notes = "".join(f"\n• {note}" for note in config.notes)
    return f"{said}\n*{config.title}*\n```\n{config.text}{command}\n```" + reply.plain(notes)


def with_registered(p: Parsed, text: object, registered: tuple[str, ...]) -> Parsed:
    """A team's registered model named in the text is the model, whatever the parser read
    (``team-llm-3b`` is not a generic 3B)."""
    if not registered or not isinstance(text, str):
        return p
    low = text.lower()
    for model_id in sorted(registered, key=len, reverse=True):
        if re.search(rf"(?<![\w-]){re.escape(model_id.lower())}(?![\w-])", low):
            fields = {k: v for k, v in p.fields.items() if k not in MODEL_FIELDS}
            merged = {k: v for k, v in p.merged.items() if k not in MODEL_FIELDS}
            unknown = p.unknown if p.unknown is not None and p.unknown.kind == "gpu" else None
            clarify = p.clarify if unknown is not None else None
            return replace(p, fields={**fields, "model": model_id},
                           merged={**merged, "model": model_id}, unknown=unknown,
                           clarify=clarify)
    return p


def unknown_sentence(exc: UnknownName) -> str:
    text = f"I don't know the {exc.kind} '{safe_echo(exc.name)}'"
    ids = [safe_echo(s) for s in exc.suggestions]
    if not ids:
        return text + "."
    choice = ids[0] if len(ids) == 1 else ", ".join(ids[:-1]) + " or " + ids[-1]
    return f"{text}. Did you mean {choice}?"


def _has_model(p: Parsed) -> bool:
    return any(k in p.merged for k in MODEL_FIELDS) or p.compare_field == "model"


def _speeds(gpu: object) -> tuple[float, float, float]:
    """(dense bf16 TFLOP/s, memory bandwidth GB/s, the catalog's default MFU) of a side's GPU;
    zeros without one."""
    if not isinstance(gpu, str):
        return 0.0, 0.0, 0.0
    try:
        found = find_gpu(gpu)
    except UnknownName:
        return 0.0, 0.0, 0.0
    return (found.bf16_dense_tflops or found.fp16_dense_tflops, found.memory_bandwidth_gbps,
            found.default_mfu)
