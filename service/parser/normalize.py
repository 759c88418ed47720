"""Clean a chat message before parsing: Slack markup, HTML entities, code ticks, Unicode, length.

Slack sends ``<@U123>`` for user mentions, ``<!channel>``/``<!here>`` for broadcasts,
``<http://url|label>`` for links, ``<#C123|name>`` for channels and escapes ``&``, ``<``, ``>``
as entities. Mentions and broadcasts are dropped (never echoed), links keep their label (a
Hugging Face link keeps its ``org/model`` path), quotes lose their ``>`` marker, emoji codes and
formatting ticks go. The text is capped at ``MAX_CHARS``: longer messages are not parsed.
"""

from __future__ import annotations

import html
import re
import unicodedata
from dataclasses import dataclass

MAX_CHARS = 10_000

_SLACK_SPECIAL = re.compile(r"<([!@#][^<>]{0,200})>")
_SLACK_LINK = re.compile(r"<((?:https?|mailto|ftp)://?[^<>|\s]{0,500})(?:\|([^<>]{0,300}))?>", re.I)
_BARE_URL = re.compile(r"\bhttps?://[^\s<>]{1,500}", re.I)
_HF_PATH = re.compile(r"huggingface\.co/(?:models/)?([\w.\-]+/[\w.\-]+)", re.I)
_HTML_TAG = re.compile(r"</?[a-z][a-z0-9]{0,15}(?:\s[^<>]{0,300})?/?>", re.I)
_EMOJI = re.compile(r":[a-z0-9_+\-']{1,40}:", re.I)
_QUOTE = re.compile(r"^[ \t]*>+[ \t]?", re.M)
_FENCE = re.compile(r"```[a-z]{0,12}\n?|`", re.I)
_BROADCAST = re.compile(r"@(?:channel|here|everyone)\b", re.I)
_SPACES = re.compile(r"[ \t\f\v]+")
_WITHOUT = re.compile(r"\bw/o\b", re.I)  # chat shorthand: "w/o flash attn", "w/ momentum"
_WITH = re.compile(r"\bw/(?=\s|[a-z0-9])", re.I)
_AT_NUMBER = re.compile(r"(?<!\S)@\s*(?=\d)")
# "global batch 512 seqs": the word after a batch size is its unit, not sequences in flight
_BATCH_UNIT = re.compile(r"(\b(?:global|micro|mini)?[\s\-_]*batch(?:[\s\-_]*size)?(?:\s+of)?\s*[:=]?\s*"
                         r"\d[\d,]*k?)\s+(?:seqs|sequences|samples|examples)\b"
                         r"(?!\s+(?:of|at|with|each|x)\b)", re.I)
# numbers as people write them, in the form the readers take
_POWER_OF_TWO = re.compile(r"\b2\s*\^\s*(1\d|2[0-4])\b")  # "context 2^15"
_DECIMAL_COMMA = re.compile(r"\b(\d),(\d{1,2})\s*([kmbt])\b", re.I)  # "1,5T tokens"
_SPACED_THOUSANDS = re.compile(r"\b(\d{1,3}) (\d{3})(?=\s*-?\s*(?:tokens?|ctx|context)\b)", re.I)
_HALF_A = re.compile(r"\bhalf\s+an?\s+(trillion|billion|million)\b", re.I)  # "half a trillion"
_ONE_A = re.compile(r"\ba\s+(trillion|billion)\s+(?=tokens?\b)", re.I)  # "a trillion tokens"
# a node's size said with "gpus": "2 nodes of 8 gpus" (8 per node, not 8 in all), "8-GPU nodes"
_NODE_WORD = r"(nodes?|machines?|servers?|boxes|hosts?|instances?|pods?)"
_NODES_OF_GPUS = re.compile(rf"\b{_NODE_WORD}\s+(of|with|x)\s+(\d{{1,3}})\s*(?:x\s*)?(?:gpus?|cards?)\b"
                            r"(?!\s*(?:each|per|a\s+node|in\s+total|total))", re.I)
_N_GPU_NODES = re.compile(rf"\b(\d{{1,3}})[\s\-]gpus?[\s\-]{_NODE_WORD}\b", re.I)
# a move between GPUs asks about the new ones: "moving it from 4x A100 40GB to 2x H100"; asked
# what changes ("anything change?", "still fit?"), it compares the two
_GPU_MOVE = re.compile(
    r"\b((?:mov|migrat|switch|upgrad|port|transferr?|go)(?:e|es|ed|ing)?\b(?:[^.?!\n]|\.(?=\d)){0,80}?)"
    r"\bfrom\s+((?:\d{1,4}\s*x?\s*)?(?:nvidia\s+|amd\s+)?[a-z]{1,4}[\s\-]?\d{2,4}[a-z]{0,2}"
    r"(?:[\s\-]*\d{2,3}\s?gb)?s?)\s+to\s+(?=(?:\d{1,4}\s*x?\s*)?(?:nvidia\s+|amd\s+)?[a-z]{1,4}[\s\-]?\d{2,4})",
    re.I)
_WHAT_CHANGES = re.compile(
    r"\b(?:anything|what(?:'s|\s+is|\s+would|\s+will)?)\s+(?:change|changes|different|differ)\b"
    r"|\bwhat\s+changes\b|\bdifferences?\b|\bcompare\b|\bstill\s+(?:fit|work|run)\b"
    r"|\b(?:better|worse|faster|slower|cheaper)\b", re.I)
# "Adafactor instead of AdamW", "on an H100 instead of an A100 40GB": the first is the choice
_INSTEAD_OF = re.compile(
    r"\b(?:instead\s+of|rather\s+than|in\s+place\s+of)\s+(?:an?\s+|the\s+|plain\s+|regular\s+)?"
    r"[\w.\-/]+(?:\s+(?:\d{1,3}\s?gb|adam\w*|gpus?|cards?|optimi[sz]er|weights|precision))?", re.I)
# "16k H100s": a cluster's GPUs in thousands, binary as clusters are built (Llama 3's "16K
# H100s" were 16,384)
_THOUSANDS_OF_GPUS = re.compile(
    r"(?<![\w.])(\d{1,3})\s?k\s+(?=(?:nvidia\s+)?(?:[ahlb]\d{2,3}|mi\d{3}x?|gb\d{3}|gpus?)s?\b)", re.I)
# "just me + 2 teammates at once": those people and the one asking
_ME_AND = re.compile(r"\b(?:just\s+)?me\s*(?:\+|and|&)\s*(\d)\s+(?:teammates?|colleagues?|coworkers?|others?"
                     r"|people|friends?|users?)\b", re.I)
# "4M tokens/step" is a batch in tokens
_TOKENS_PER = re.compile(r"\b(tokens?|toks?)\s*/\s*(step|batch|iter(?:ation)?|update)s?\b", re.I)
# "100B multilingual tokens": a word between a billions/trillions amount and "tokens"
_QUALIFIED_TOKENS = re.compile(
    r"(?<![\w.])(\d[\d.,]*\s?[bt])\s+(?!tokens?\b)([a-z][a-z\-]{2,20})\s+tokens?\b", re.I)
_TOKENS_IN_TOTAL = re.compile(r"\b(tokens?)\s+in\s+total\b", re.I)  # a total, not "tokens in" (a prompt)
_PER_NAMED_GPU_HOUR = re.compile(  # "$3.10 per H200-hour", "$2/a100-hr"
    r"(?:\bper\s+|/\s*)((?:nvidia\s+)?[a-z]{1,3}\d{2,4}[a-z]{0,4})[\s\-]?(?:gpu[\s\-]?)?h(?:ou)?rs?\b", re.I)
# "int4 (AWQ)": the method in brackets says which 4-bit format (one variant, not two)
_FOUR_BIT_NAMED = re.compile(r"\b(?:int4|4[\s\-]?bits?|w4a16|q4)\s*\(\s*(awq|gptq|nf4|bnb|mxfp4)\s*\)", re.I)
# "a 400M-token dataset" (bounded: a run of digits must not be rescanned from every position)
_N_TOKEN = re.compile(r"(?<![\d.,])(\d{1,6}(?:[.,]\d{1,3})?\s?[kmbt]?)-token\b", re.I)
_DOLLARS_AFTER = re.compile(r"(?<![$\d.])(\d+(?:\.\d+)?)\s*(?:\$|usd)\s*(?=/|per\b|an?\s+h|hourly)", re.I)
# "2.4/gpu-hr", "2.99/gpu/hr"; a price in cents with no "$": "@ 3.20/hr", "3.20 per hour"
_PER_GPU_HOUR = re.compile(r"(?<![$\d.])(\d+(?:\.\d+)?)(?=\s*/\s*gpu\s*[\-/]?\s*h(?:ou)?rs?\b)"
                           r"|(?<![$\d.])(\d+\.\d\d)(?=\s*(?:/|per|an?)\s*(?:gpu\s*[\-/]?\s*)?h(?:ou)?rs?\b)",
                           re.I)
# a year ("the 2025 offsite", "in 2026", "Q3 2025") is not a setting
_YEAR = re.compile(r"\b(?:(?<=the )|(?<=in )|(?<=since )|(?<=by )|(?<=for )|(?<=q[1-4] )"
                   r"|(?<=fy))(?:201[5-9]|202\d|203[0-5])\b"
                   r"(?!\s*(?:tokens?|gpus?|k\b|x\b|seq|ctx|context))", re.I)
# a load counted in units that each have a length: "how many 32k sessions", "32 concurrent 8k
# requests" (the length sizes each one)
_AT_ONCE = r"(?:concurrent|parallel|simultaneous)\s+"
_EACH_LONG = r"(?:[\s\-]?(?:tokens?|toks?|ctx|context))?[\s\-]+"
_SESSIONS = r"sessions?|requests?|reqs|users?|conversations?|convos?|chats?|streams?"
# "how many 32k sessions": the count is the question, so the number sizes each one
_HOW_MANY_SIZED = re.compile(
    rf"\bhow\s+many\s+({_AT_ONCE})?(\d{{1,3}}(?:\.\d)?\s?k|\d{{4,6}}){_EACH_LONG}"
    rf"({_SESSIONS}|sequences?|seqs|prompts?)\b", re.I)
# "32 concurrent 8k requests": a count, then a length (not a batch's sequences, nor traffic:
# "8k requests a day" has no count before it)
_COUNT_OF_SIZED = re.compile(
    r"(?<!batch )(?<!batch: )(?<!batch of )"
    rf"\b(\d{{1,5}}\s+(?:{_AT_ONCE})?)(\d{{1,3}}(?:\.\d)?\s?k){_EACH_LONG}({_SESSIONS})\b"
    r"(?!\s*(?:/|per\b|a\s+(?:day|week|month|minute|second)|an\s+hour|each\s+(?:day|hour|week)|every\b"
    r"|daily\b|hourly\b|weekly\b|monthly\b|in\s+total\b|total\b))", re.I)
# "a single 128k request": one unit with a length (singular, so the number cannot count them)
_ONE_SIZED = re.compile(
    rf"\b(?P<det>a\s+single|one|single|a|each|per|every)\s+(?P<len>\d{{1,3}}(?:\.\d)?\s?k){_EACH_LONG}"
    r"(?P<unit>session|request|req|conversation|convo|chat|stream|prompt|sequence)\b(?!s)", re.I)
# a model name's "+" ("Command R+"): "plus", as the model ids write it
_NAME_PLUS = re.compile(r"\b(command[\s\-_]?r)\+(?!\w)", re.I)
# Markdown strikethrough ("~~zero-2~~ zero-3"): what was struck out is not meant
_STRUCK = re.compile(r"~~[^~\n]{1,80}~~")
# a context said only to be set aside: "not doing the 10M ctx obviously, say 256k"
_NOT_THAT_CONTEXT = re.compile(
    r"\b(?:not|never|won't\s+be|aren't|isn't)\s+(?:doing|using|running|going\s+(?:for|with)|needing|at"
    r"|serving)\s+(?:the\s+|a\s+|full\s+|that\s+|its\s+|max\s+)*\d[\d.,]*\s*[km]?\s*"
    r"(?:tokens?\s+)?(?:ctx|context(?:\s+(?:length|window))?|window)\b", re.I)
# "seq 4k (edit: 8k)": the edit replaces the value just before it
# (the value before it is at most a word long: a run of characters is not rescanned from every
# position)
_EDITED = re.compile(r"(?<!\S)\S{1,24}\s*\((?:edit(?:ed)?|correction|update[d]?|fixed)\s*:\s*"
                     r"([^()\n]{1,24})\)", re.I)
# "half a node of 8 h100s": half the node's GPUs
_HALF_NODE = re.compile(r"\bhalf\s+(?:a|the|of\s+a|of\s+the)\s+(?:node|box|server|machine)\s+"
                        r"(?:of|with)\s+(\d{1,2})\s*x?\s*", re.I)
_UNDERSCORE_THOUSANDS = re.compile(r"\b(\d{1,3})_(\d{3})\b")  # "32_768", as Python writes it
# 3D-parallel shorthand "t=8 p=8 d=8" (only as the triple: a lone "p=8" says nothing)
_3D_SHORTHAND = re.compile(r"\bt\s*=\s*(\d+)\s*[,;/]?\s*p\s*=\s*(\d+)\s*[,;/]?\s*d\s*=\s*(\d+)\b", re.I)
# "does it fit or do we need two nodes?": the alternative is asked, not stated
_OR_NEED = re.compile(r"\bor\s+(?:do|would|will|should)\s+(?:we|i|you)\s+"
                      r"(?:need|have\s+to\s+(?:use|go\s+to))\s+(?:a\s+second|another|more|two|three"
                      r"|four|\d{1,3})\s+(?:nodes?|machines?|servers?|boxes)\b", re.I)
# a ticket, PR or issue number ("PR #4096", "re ticket 8192") names a thing, not a setting
_REFERENCE = re.compile(r"(?<![\w&])#\s?\d+\b|\b(?:tickets?|prs?|pull\s+requests?|issues?|jira|bugs?"
                        r"|incidents?|inc)\s*(?:no\.?|number|num)?\s*#?\s*\d+\b(?!\s*(?:[kmbt]\b|x\b|gpus?|gb))",
                        re.I)
_RANK_OF_PROCESS = re.compile(r"\b(?:machine|local|node|global|process)[\s_\-]?rank\s*[:=]?\s*\d+", re.I)
_TAG = re.compile(r"(?<=[a-z0-9]):(?=\d+(?:\.\d+)?[bm]\b)", re.I)  # ollama tags: "llama3:70b"
_TRANSLATE = str.maketrans({
    "\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u00d7": "x", "\u2013": "-",
    "\u2014": "-", "\u2212": "-", "\u2009": " ", "\u00a0": " ", "\u202f": " ", "\u2026": "...",
    "\u200b": "", "\u200c": "", "\u200d": "", "\u2060": "", "\ufeff": "",
})


@dataclass(frozen=True, slots=True)
class Cleaned:
    """The text to parse (original case) and what was removed on the way."""

    text: str
    too_long: bool = False
    had_markup: bool = False  # mentions, broadcasts or HTML tags were removed


def _link(match: re.Match[str]) -> str:
    url, label = match.group(1), match.group(2)
    repo = _HF_PATH.search(url)
    if repo:
        return " " + repo.group(1) + " "
    return " " + (label or "") + " "


def _special(match: re.Match[str]) -> str:
    inner = match.group(1)
    if inner.startswith("#") and "|" in inner:  # <#C123|general>: a channel name, no ping
        return " "
    return " "


def _url(match: re.Match[str]) -> str:
    repo = _HF_PATH.search(match.group(0))
    return " " + repo.group(1) + " " if repo else " "


def clean(raw: object) -> Cleaned:
    """The message as plain text, safe to scan; ``too_long`` when over ``MAX_CHARS``."""
    if not isinstance(raw, str):
        return Cleaned("")
    if len(raw) > MAX_CHARS:
        return Cleaned("", too_long=True)
    text = unicodedata.normalize("NFKC", raw).translate(_TRANSLATE)
    text = "".join(ch if ch in "\n\t" or unicodedata.category(ch)[0] != "C" else " " for ch in text)
    marked = bool(_SLACK_SPECIAL.search(text) or _BROADCAST.search(text))
    text = _SLACK_LINK.sub(_link, text)
    text = _SLACK_SPECIAL.sub(_special, text)
    text = html.unescape(text)  # Slack's &lt; &gt; &amp; and pasted HTML entities
    text = _SLACK_LINK.sub(_link, text)
    text = _SLACK_SPECIAL.sub(_special, text)
    tags = _HTML_TAG.search(text) is not None
    text = _HTML_TAG.sub(" ", text)
    text = _BARE_URL.sub(_url, text)
    text = _BROADCAST.sub(" ", text)
    text = _EMOJI.sub(" ", text)
    text = _QUOTE.sub("", text)
    text = _FENCE.sub(" ", text)
    text = _WITH.sub("with ", _WITHOUT.sub("without", text))
    text = _AT_NUMBER.sub("at ", text)  # "32 sessions @ 64k": at a context, not "sessions: 64k"
    text = _TAG.sub(" ", text)
    text = _STRUCK.sub(" ", text)
    text = _NOT_THAT_CONTEXT.sub(" ", text)
    text = _OR_NEED.sub(" or more nodes", text)
    text = _EDITED.sub(r"\1", text)
    text = _BATCH_UNIT.sub(r"\1", text)
    text = _3D_SHORTHAND.sub(r"tp=\1 pp=\2 dp=\3", text)
    text = _numbers_as_written(text)
    text = _SPACES.sub(" ", text).strip()
    return Cleaned(text, had_markup=marked or tags)


def _numbers_as_written(text: str) -> str:
    """'2^15' -> '32768', '1,5T' -> '1.5T', '128 000 tokens' -> '128000 tokens', 'half a
    trillion' -> '0.5 trillion', '400M-token' -> '400M tokens', '1.10 $/h' and '2.4/gpu-hr' ->
    '$1.10/h', '$2.4/gpu-hr'; a process's rank ('machine_rank: 0') is not a LoRA rank, nor a
    ticket's or PR's number a sequence length; 'how many 32k sessions' -> 'how many sessions at
    32k context', '32 concurrent 8k requests' -> '32 concurrent requests at 8k
    context'."""
    text = _POWER_OF_TWO.sub(lambda m: str(2 ** int(m[1])), text)
    text = _NAME_PLUS.sub(r"\1 plus", text)
    text = _DECIMAL_COMMA.sub(r"\1.\2\3", text)
    text = _SPACED_THOUSANDS.sub(r"\1\2", text)
    text = _UNDERSCORE_THOUSANDS.sub(r"\1\2", text)
    text = _HALF_NODE.sub(lambda m: f"{int(m[1]) // 2}x ", text)
    text = _HALF_A.sub(r"0.5 \1", text)
    text = _ONE_A.sub(r"1 \1 ", text)
    text = _N_TOKEN.sub(r"\1 tokens", text)
    text = _NODES_OF_GPUS.sub(r"\1 \2 \3 gpus per node", text)
    text = _N_GPU_NODES.sub(r"\2 of \1 gpus per node", text)
    text = _FOUR_BIT_NAMED.sub(r"\1", text)
    text = _TOKENS_PER.sub(r"\1 per \2", text)
    text = _THOUSANDS_OF_GPUS.sub(lambda m: f"{int(m[1]) * 1024} ", text)
    text = _ME_AND.sub(lambda m: f"{int(m[1]) + 1} users", text)
    text = _INSTEAD_OF.sub(" ", text)
    text = _GPU_MOVE.sub(r"\1\2 vs " if _WHAT_CHANGES.search(text) else r"\1to ", text)
    text = _QUALIFIED_TOKENS.sub(r"\1 tokens of \2", text)
    text = _TOKENS_IN_TOTAL.sub(r"\1 total", text)
    text = _HOW_MANY_SIZED.sub(r"how many \1\3 at \2 context", text)
    text = _COUNT_OF_SIZED.sub(r"\1\3 at \2 context", text)
    text = _ONE_SIZED.sub(r"\g<det> \g<unit> at \g<len> context", text)
    text = _PER_NAMED_GPU_HOUR.sub(r" per gpu hour, \1,", text)
    text = _DOLLARS_AFTER.sub(r"$\1", text)
    text = _PER_GPU_HOUR.sub(lambda m: "$" + (m.group(1) or m.group(2)), text)
    text = _YEAR.sub(" ", text)
    text = _REFERENCE.sub(" ", text)
    return _RANK_OF_PROCESS.sub(" ", text)


def safe_echo(text: str, limit: int = 40) -> str:
    """A piece of user text that may be shown back: name characters only, short."""
    kept = re.sub(r"[^A-Za-z0-9 .\-_/]", "", text)
    kept = re.sub(r"\s+", " ", kept).strip(" ./-_")
    return kept[:limit]
