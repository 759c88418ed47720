"""``ask``: one chat message (and the thread's previous request) -> the answer the bot posts."""

from __future__ import annotations

from typing import Any

from service.asking.answer_types import AskAnswer
from service.asking.limits import answer as limit_line
from service.asking.run_engine import Outcome, run
from service.parser.parse import parse
from service.parser.types import Parsed
from service.render import slack_reply as reply
from service.render.slack_compare import Side, compare_reply

FALLBACK = ("Sorry, I couldn't work that one out. " + reply.HOW_TO_ASK)


def ask(text: object, previous: dict[str, Any] | None = None) -> AskAnswer:
    """Parse, estimate and reply; never raises (every failure becomes a friendly reply)."""
    try:
        return _ask(parse(text, previous))
    except Exception:
        return AskAnswer("invalid", {}, None, reply.plain(FALLBACK))


def _ask(p: Parsed) -> AskAnswer:
    if p.intent == "help":
        return AskAnswer("help", p.merged, None, reply.plain(reply.HELP))
    if p.problem is not None:
        return AskAnswer("invalid", p.merged, None, reply.plain(f"{p.problem} {reply.HOW_TO_ASK}"))
    if p.clarify is not None and (p.unknown is not None or not _has_model(p)):
        return AskAnswer(p.intent, p.merged, None, reply.plain(p.clarify), p.clarify, p.notes)
    if p.intent == "compare":
        return _compare(p)
    out = run(p.merged)
    if out.error is not None:
        return _failed(p, out)
    assert out.estimate is not None
    text = reply.estimate_reply(p, out.estimate, out.plan) + _qlora_tip(p, out)
    limit = limit_line(p.maximize, p.merged, out.estimate, out.plan) if p.maximize else None
    if limit:
        text += "\n" + reply.plain(limit)
    if p.clarify is not None:
        text += "\n" + reply.plain(p.clarify)
    return AskAnswer(p.intent, p.merged, out.answer, text, p.clarify, p.notes)


def _qlora_tip(p: Parsed, out: Outcome) -> str:
    """LoRA that does not fit the stated GPUs: say whether QLoRA (4-bit base) would."""
    if p.merged.get("finetune_method") != "lora" or out.plan is None or out.plan.fits:
        return ""
    alt = run({**p.merged, "finetune_method": "qlora", "quantization": "nf4"})
    if alt.plan is None or not alt.plan.fits or alt.plan.estimate is None:
        return ""
    need = alt.plan.estimate.total_bytes / 1e9
    return "\n" + reply.plain(f"Tip: QLoRA (4-bit NF4 base) fits here: {need:,.1f} GB per GPU "
                               f"({alt.plan.layout.describe() if alt.plan.layout else 'same GPUs'}).")


def _has_model(p: Parsed) -> bool:
    return any(k in p.merged for k in ("model", "params_b", "arch")) or p.compare_field == "model"


def _failed(p: Parsed, out: Outcome) -> AskAnswer:
    parsed = {k: v for k, v in p.merged.items() if k != out.bad_field}
    if out.unknown is not None:
        return AskAnswer(p.intent, parsed, None, reply.plain(out.error or FALLBACK), out.error, p.notes)
    text = f"{out.error} {reply.HOW_TO_ASK}"
    return AskAnswer("invalid", parsed, None, reply.plain(text), None, p.notes)


def _compare(p: Parsed) -> AskAnswer:
    rows: list[Side] = []
    sides: list[dict[str, Any]] = []
    for variant in p.compare:
        out = run({**p.merged, **variant.changes})
        rows.append(Side(variant.label, out.estimate, out.plan, out.error))
        sides.append({"label": variant.label, "changes": variant.changes, "answer": out.answer,
                      "error": out.error})
    answer = {"compare": {"field": p.compare_field, "variants": sides}}
    if all(s["answer"] is None for s in sides):
        text = f"{rows[0].error or FALLBACK} {reply.HOW_TO_ASK}"
        return AskAnswer("invalid", p.merged, None, reply.plain(text), None, p.notes)
    return AskAnswer("compare", p.merged, answer, compare_reply(p, rows), p.clarify, p.notes)
