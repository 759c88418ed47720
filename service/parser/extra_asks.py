"""What a message asks for beside the answer itself: a launch config ("and the vllm command?",
"need a deepspeed zero3 json"), a price by the hour or month ("for how much per hour", "and the
cost per month?"). Either one alone in a thread asks it of the thread's question."""

from __future__ import annotations

import re

# "and the vllm command?", "deepspeed config pls", "need a deepspeed zero3 json", "torchrun cmd
# for 2 nodes ...", "how do I launch it": the config's text (asked for, not a pasted "ds_config":
# a request word before it, the message opening with it, or a "?"/"pls" after it)
_TOOL_NAMES = r"(?:vllm|sglang|deepspeed|ds|megatron|torchtitan|accelerate|torchrun)"
_NOUN = (r"(?:command|cmd|config(?:uration)?|json|yaml|launch\s+(?:line|script)|"
         r"(?P<file>ds_config|accelerate_config)(?:\.(?:json|yaml))?)")
# the tool, and up to two words between it and the noun ("deepspeed zero3 json", "vllm serve
# command", "accelerate fsdp config")
_TOOLED = r"(?:(?P<tool>" + _TOOL_NAMES + r")\s+(?:[\w.-]+\s+){0,2}?)?"
_REQUEST = (r"(?:and|give\s+me|show(?:\s+me)?|what(?:'s|\s+is|\s+would\s+be)|send|post|need|"
            r"want|get|write|paste|share|generate|make|print|drop)")
_LAUNCH_ASK = re.compile(
    r"\b" + _REQUEST + r"\s+(?:me\s+)?(?:the\s+|a\s+|an\s+)?(?:matching\s+|full\s+)?"
    + _TOOLED + _NOUN + r"(?![\w.])"
    r"|^\W*" + _TOOLED.replace("P<tool>", "P<tool2>") + _NOUN.replace("P<file>", "P<file2>")
    + r"\s+(?:for|to|that|pls|please)\b"
    r"|\b" + _TOOLED.replace("P<tool>", "P<tool3>") + _NOUN.replace("P<file>", "P<file3>")
    + r"\s*(?:\?|pls\b|please\b)"
    r"|\bhow\s+(?:do|would|should)\s+(?:i|we)\s+(?:launch|start|run)\s+(?:it|this|that)\b")
_TOOL = {"ds": "deepspeed", "ds_config": "deepspeed", "accelerate_config": "accelerate"}


# "deepspeed config ... for llama 70b on 8x a100, will it fit?" describes a setup and asks of it
_FIT_QUESTION = re.compile(r"\b(?:will|does|would|can|could)\s+(?:it|this|that)\s+fit\b"
                           r"|\bfits?\s*\?")


def launch_asked(low: str) -> str | None:
    m = _LAUNCH_ASK.search(low)
    if m is None or ((m.group("tool2") is not None or m.group("file2") is not None
                     or low.lstrip().startswith(("json", "yaml", "config"))) \
            and _FIT_QUESTION.search(low)):
        return None
    found = [m.group(g) for g in ("tool", "tool2", "tool3", "file", "file2", "file3")]
    tool = next((t for t in found if t), "")
    return _TOOL.get(tool, tool)


# "for how much per hour", "and the cost per month?": the answer's GPUs priced by the hour
_HOURLY = re.compile(r"(?:\b(?:cost\w*|price\w*|spend|budget)|\$|\bhow\s+much(?=\s+(?:per\b|an?\s+"
                     r"(?:hour|month)|money|\$|would|will|does|is\s+it)))[^.?!]{0,40}?"
                     r"(?:per\s+h(?:ou)?r\b|an?\s+hour\b|/\s*h(?:ou)?r?\b|hourly\b"
                     r"|per\s+month\b|an?\s+month\b|/\s*mo(?:nth)?\b|monthly\b)"
                     r"|\b(?:hourly|monthly)\s+(?:cost|price|rate|spend|bill)\b")


def price_asked(low: str) -> bool:
    return _HOURLY.search(low) is not None


# "what's the cheapest setup on h100s", "most cost-effective way to serve": cheaper weights count
_CHEAPER = re.compile(r"\bcheap(?:est|er)?\b|\bcost[\s\-]?effective\b|\bleast\s+expensive\b"
                      r"|\bsave\s+(?:money|costs?)\b|\blowest\s+cost\b")


def cheaper_asked(low: str) -> bool:
    return _CHEAPER.search(low) is not None


# "what's the kv cache per token for llama 3 70b", "how big is the kv cache at 32k"
_KV_ASK = re.compile(r"\bkv[\s\-_]*cache\b[^.?!]{0,30}?\b(?:per\s+(?:token|seq\w*|request|user)|"
                     r"size|how\s+(?:big|much|large))"
                     r"|\b(?:how\s+(?:big|much|large)|size\s+of|what(?:'s|\s+is))\s+(?:is\s+)?(?:the\s+)?"
                     r"kv[\s\-_]*cache\b")


def kv_asked(low: str) -> bool:
    return _KV_ASK.search(low) is not None
