"""The "Launch config" button: the answer's first launch config (the one for the plan's stack)
posted in the thread as a code block, with the command that uses it and what is left to fill
in; the others are on the report page."""

from __future__ import annotations

from bot.answer_view import AnswerView, LaunchView
from bot.blocks import Message, context, section
from bot.constants import MAX_SECTION_TEXT
from bot.limits import fit_blocks
from bot.safety import safe_mrkdwn, truncate

FENCE = "```"
CODE_ROOM = MAX_SECTION_TEXT - 2 * len(FENCE) - 2


def _code(text: str) -> list[str]:
    """Code blocks of at most a section's length, split at line ends."""
    chunks: list[str] = []
    current = ""
    for line in safe_mrkdwn(text.rstrip("\n")).split("\n"):
        if current and len(current) + len(line) + 1 > CODE_ROOM:
            chunks.append(current)
            current = ""
        current = f"{current}\n{line}" if current else line[:CODE_ROOM]
    chunks.append(current)
    return [f"{FENCE}\n{chunk}\n{FENCE}" for chunk in chunks]


def launch_message(answer: AnswerView, link: str | None) -> Message | None:
    """None when the answer has no launch config (its plan does not fit)."""
    if not answer.launch:
        return None
    config: LaunchView = next(iter(answer.launch.values()))
    stack = answer.planner.stack_name if answer.planner is not None else ""
    title = f"*{safe_mrkdwn(config.title)}*" + (f" for {safe_mrkdwn(stack)}" if stack else "")
    if config.filename:
        title += f" — save as `{safe_mrkdwn(config.filename)}`"
    blocks = [section(title), *(section(code) for code in _code(config.text))]
    if config.command:
        blocks += [section("Run:"), *(section(code) for code in _code(config.command))]
    others = [name for name in answer.launch if name != config.tool]
    notes = [safe_mrkdwn(n) for n in config.notes]
    if others and link:
        notes.append(f"Also on <{link}|the report>: " + ", ".join(others))
    if notes:
        blocks.append(context(*(truncate(n, 300) for n in notes[:10])))
    fallback = truncate(f"{config.title}:\n{config.text}", 2900)
    return Message(fallback, fit_blocks(blocks))
