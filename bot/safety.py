"""Keep Slack markup people typed out of what the bot posts, and out of what it asks.

Slack writes mentions and broadcasts in message text as ``<@U123>``, ``<#C123|general>``,
``<!here>``, ``<!channel>``, ``<!everyone>``, ``<!subteam^S123>``, ``<!date^...>``; a plain
``@channel`` also pings when a message is posted with ``link_names``. Nothing of that kind may
reach a reply: every piece of text that came from a person or from the service passes
``safe_mrkdwn`` before it is posted, and posts use ``verbatim`` text so Slack parses nothing.
"""

from __future__ import annotations

import re

_BOT_MENTION = r"<@{user}(?:\|[^>]*)?>"
_USER = re.compile(r"<@[^>]*>")
_CHANNEL = re.compile(r"<#[^>|]*(?:\|([^>]*))?>")
_SPECIAL = re.compile(r"<![^>]*>")
_LINK = re.compile(r"<((?:https?|mailto):[^|>]*)(?:\|([^>]*))?>", re.I)
_BROADCAST_WORD = re.compile(r"(?<![\w@])[@＠](channel|here|everyone)\b", re.I)
_BARE_AMP = re.compile(r"&(?!(?:amp|lt|gt);)")
_ENCODED_MARKUP = re.compile(r"&lt;[@#!][^&]*?&gt;", re.I)


def strip_markup(text: str) -> str:
    """Mentions and broadcasts out, as text without angle-bracket markup (links keep their URL,
    channels their name); ``@channel`` words out."""
    text = _USER.sub("", text)
    text = _CHANNEL.sub(lambda m: f"#{m.group(1)}" if m.group(1) else "", text)
    text = _SPECIAL.sub("", text)
    text = _LINK.sub(lambda m: m.group(2) or m.group(1), text)
    return _BROADCAST_WORD.sub(r"\1", text)


def clean_question(text: str, bot_user_id: str | None = None) -> str:
    """A Slack message as the service should read it: our mention and every other mention or
    broadcast removed, links as their URL, Slack's ``&amp;``/``&lt;``/``&gt;`` decoded,
    whitespace collapsed."""
    if bot_user_id:
        text = re.sub(_BOT_MENTION.format(user=re.escape(bot_user_id)), " ", text)
    text = strip_markup(text)
    text = text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    return " ".join(text.split())


def safe_mrkdwn(text: str) -> str:
    """Text safe to post as mrkdwn: markup and broadcast words removed, then ``&``, ``<`` and
    ``>`` escaped (entities the text already holds are kept, not escaped twice)."""
    text = _ENCODED_MARKUP.sub("", text)
    text = strip_markup(text)
    text = _BARE_AMP.sub("&amp;", text)
    return text.replace("<", "&lt;").replace(">", "&gt;")


def safe_plain(text: str) -> str:
    """Text for a ``plain_text`` object (a button label): no markup, no broadcast words."""
    return _BROADCAST_WORD.sub(r"\1", strip_markup(text))


def truncate(text: str, limit: int) -> str:
    """At most ``limit`` characters, cut on a line or word boundary with an ellipsis; never
    inside an escape entity or an unclosed code block."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    for sep in ("\n", " "):
        at = cut.rfind(sep)
        if at > limit // 2:
            cut = cut[:at]
            break
    amp = cut.rfind("&")
    if amp != -1 and ";" not in cut[amp:]:
        cut = cut[:amp]
    if cut.count("```") % 2:
        cut = cut[: limit - 5] + "\n```"
    return cut + "…"
