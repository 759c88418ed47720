"""Block Kit for what the bot posts: the verdict first, a compact per-component table, the
assumptions on one line, the report link and buttons for the usual next questions. Every
message has a plain-text fallback and stays within Slack's limits (``bot.limits``). Text from
people or the service passes ``safe_mrkdwn``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bot.answer_view import AnswerView
from bot.constants import (
    ACTION_LAUNCH,
    ACTION_REPORT,
    EXAMPLES,
    HOW_TO_ASK,
    MAX_BUTTON_VALUE,
    MAX_FALLBACK_TEXT,
    METADATA_EVENT,
)
from bot.figures import Figures, figures, table
from bot.followups import button_value, next_questions
from bot.limits import Block, fit_blocks, mrkdwn, plain
from bot.safety import safe_mrkdwn, truncate
from bot.service_client import AskResult, ServiceError


@dataclass(frozen=True, slots=True)
class Message:
    """What one post carries: fallback text, blocks and the metadata a follow-up reads."""

    text: str
    blocks: list[Block]
    metadata: dict[str, Any] | None = field(default=None)

    def payload(self) -> dict[str, Any]:
        out: dict[str, Any] = {"text": self.text, "blocks": self.blocks}
        if self.metadata is not None:
            out["metadata"] = self.metadata
        return out


def section(text: str) -> Block:
    return {"type": "section", "text": mrkdwn(text)}


def context(*texts: str) -> Block:
    return {"type": "context", "elements": [mrkdwn(t) for t in texts]}


def _mark(fits: bool | None) -> str:
    if fits is None:
        return ""
    return ":white_check_mark: " if fits else ":x: "


def _split_reply(reply: str) -> tuple[str, list[str], list[str]]:
    """The reply's verdict line, its body lines and its assumptions line(s)."""
    lines = [line for line in reply.split("\n") if line.strip()]
    if not lines:
        return "", [], []
    body: list[str] = []
    assumed: list[str] = []
    for line in lines[1:]:
        (assumed if line.startswith(("_Assumed:_", "_GB =", "_You said:_")) else body).append(line)
    return lines[0], body, assumed


def _asked_block(asked: str | None) -> list[Block]:
    return [context(f"> {truncate(safe_mrkdwn(asked), 280)}")] if asked else []


def _buttons(result: AskResult, link: str | None, figs: Figures | None) -> list[Block]:
    elements: list[dict[str, Any]] = []
    if link:
        elements.append({"type": "button", "action_id": ACTION_REPORT, "text": plain("Open the report"),
                         "url": link, "style": "primary"})
    if link and result.answer is not None and result.answer.launch \
            and len(link) <= MAX_BUTTON_VALUE:
        elements.append({"type": "button", "action_id": ACTION_LAUNCH,
                         "text": plain("Launch config"), "value": link})
    for question in next_questions(result.parsed, result.intent, figs.layout if figs else None):
        value = button_value(question, result.parsed)
        if value is not None:
            elements.append({"type": "button", "action_id": question.action_id,
                             "text": plain(question.label), "value": value})
    return [{"type": "actions", "block_id": "fitcheck_next", "elements": elements}] if elements else []


def _estimate_blocks(reply: str, figs: Figures | None) -> list[Block]:
    verdict, body, assumed = _split_reply(reply)
    blocks = [section(_mark(figs.fits if figs else None) + verdict)]
    if figs is not None and figs.per_gpu:
        body = [line for line in body if not line.startswith("Per GPU (GB):")]
    if body:
        blocks.append(section("\n".join(body)))
    if figs is not None and figs.per_gpu:
        blocks.append(section(table(figs)))
    if assumed:
        blocks.append(context(*assumed))
    return blocks


def _friendly(result: AskResult, text: str) -> list[Block]:
    """Help, a question back, or text that asked nothing: kind words and examples."""
    if result.intent == "help":
        return [section(text), context("Also: `/fitcheck <question>` anywhere, a DM, or paste a "
                                       "report link. Buttons under an answer re-ask it in place.")]
    lead = ":thinking_face: " if result.clarify else ":wave: "
    examples = " · ".join(f"`{e}`" for e in EXAMPLES[:3])
    return [section(lead + text), context(f"For example: {examples}")]


def answer_message(result: AskResult, asked: str | None = None) -> Message:
    """The post for one answered question (``asked``: the question, echoed above a slash
    command's answer that the channel sees)."""
    figs = figures(result.answer)
    has_answer = result.answer is not None
    reply = safe_mrkdwn(result.reply).strip() or HOW_TO_ASK
    blocks = _asked_block(asked)
    blocks += _estimate_blocks(reply, figs) if has_answer else _friendly(result, reply)
    link = result.link or (result.answer.link if result.answer is not None else None)
    if has_answer:
        blocks += _buttons(result, link if isinstance(link, str) else None, figs)
    fallback = _split_reply(reply)[0] if has_answer else reply
    metadata = {"event_type": METADATA_EVENT,
                "event_payload": {"intent": result.intent, "parsed": result.parsed}}
    return Message(truncate(fallback, MAX_FALLBACK_TEXT), fit_blocks(blocks), metadata)


def error_message(error: ServiceError, asked: str | None = None) -> Message:
    """A short apology with the service's status: never silence."""
    if error.kind == "rejected":
        text = (f":grey_question: Sorry, I couldn't read that ({safe_mrkdwn(error.status)}). "
                + HOW_TO_ASK)
    else:
        text = (f":warning: Sorry, I can't answer right now: the fitcheck service "
                f"{safe_mrkdwn(error.status)}. Please try again in a minute.")
    blocks = [*_asked_block(asked), section(text)]
    return Message(truncate(text, MAX_FALLBACK_TEXT), fit_blocks(blocks))


def unfurl_blocks(answer: AnswerView, url: str) -> list[Block]:
    """The card under a pasted report link: the verdict, the table, the report button."""
    figs = figures(answer)
    verdict = figs.verdict if figs else "fitcheck report"
    blocks = [section(_mark(figs.fits if figs else None) + f"*{safe_mrkdwn(verdict)}*")]
    if figs is not None and figs.per_gpu:
        blocks.append(section(table(figs)))
    blocks.append({"type": "actions", "elements": [
        {"type": "button", "action_id": ACTION_REPORT, "text": plain("Open the report"), "url": url}]})
    return fit_blocks(blocks)
