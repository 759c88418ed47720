"""GPU names as people write them, resolved by the core's catalog and never swapped for another.

One pattern finds what looks like a GPU ("H100 SXM 80GB", "8xh100", "rtx 3060 12gb", "gtx 1080
ti", "radeon rx 7900 xtx", "mi300x", "intel arc a770", a bare "4090"); ``find_gpu`` says which
catalog entry it is. A name the catalog lacks becomes an ``Unknown`` with the closest ids, as
written: the reply says "I don't know the RTX 3060 12GB", never answers for an RTX 3090 instead.
The catalog decides, so a GPU added to it is read without a change here.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache

from service.core.errors import UnknownName
from service.core.hardware.gpus import Gpu, all_gpus, find_gpu, suggest_gpus
from service.parser.normalize import safe_echo
from service.parser.scan import MAX_MATCHES, Scan
from service.parser.types import Unknown

# a card's memory written bare after its name ("a100-80", "h100 80"), and what a number after a
# name counts instead (a load, or a model's layers and heads)
_SOLD_GB = "12|16|20|24|32|40|48|64|80|94|96|141|180|192|256|288"
_NOT_MEMORY = (r"users?|concurrent|parallel|simultaneous|requests?|reqs|ppl|people|streams?|sessions?"
               r"|clients?|chats?|layers|heads")
_NAME = re.compile(
    r"(?:(?<=\dx)|(?<=\d x)|(?<=\d\*)|(?<![a-z0-9.\-/$]))"
    r"(?P<box>(?:dgx|hgx)[\s\-]*)?"
    r"(?P<vendor>(?:(?:nvidia|amd|intel|geforce|tesla|quadro|radeon|instinct|arc)[\s\-]*){0,3})"
    r"(?P<core>(?:rtx|gtx)[\s\-]*(?:pro[\s\-]*)?a?\d{3,4}(?!\d)"
    r"|rx[\s\-]*\d{3,4}|titan[\s\-]*(?:rtx|xp|x|v)?|(?:gh|gb)\d{3}|mi[\s\-]?\d{3}[a-z]?"
    r"|6000[\s\-]*ada|h\d{2,3}|a\d{2,4}g?|b\d{3}a?|l\d{2}s?|v100|k80|p100|[tl]4|[1-5]0[5-9]0)"
    r"(?:s(?=[\s\-_(]+(?:sxm|pcie|nvl|\(?\d{1,3}\s?(?:gb|gib|g)\b)))?"  # "a100s 40g", "h100s pcie"
    r"(?P<variant>(?:[\s\-_]{0,3}(?:sxm\d?|pcie|nvl|hbm3e?|ada|blackwell|max[\s\-]?q|mobile|laptop|ti|super"
    r"|xtx|xt|gre|ultra))*)"
    # "2x 3090 (48GB total)": memory summed over the cards is not the card's variant
    r"(?P<mem>[\s\-_]{0,3}(?:\(\d{1,3}\s?(?:gb|gib|g)s?\)?(?![a-z0-9])"
    r"(?!\s*(?:total|in\s+total|combined|together|overall|altogether|across)\b)"
    r"|\d{1,3}\s?(?:gb|gib|g)s?\)?(?![a-z0-9]))"
    # "a100-80 nodes", "a100-80s": a memory joined by a dash is the card's, even before a
    # count of GPUs or nodes (not before a load: "a100-40 users")
    rf"|[\-_](?:{_SOLD_GB})(?=s?(?![\w.%]))(?!s?\s*(?:{_NOT_MEMORY})\b)"
    rf"| (?:{_SOLD_GB})(?=s?(?![\w.%]))(?!s?\s*(?:{_NOT_MEMORY}|gpus?|cards?|nodes?|per\b)\b))?"
    r"(?P<plural>s|'s)?(?![a-z0-9])"
)
_MEMORY_FIRST = re.compile(r"\b\d{1,3}\s?(?:gb|gib|g)\s+$")
_CONSUMER = re.compile(r"rtx|gtx|geforce|titan|radeon|\brx\b|\barc\b|\b[1-9]0[5-9]0\b")
_MEMORY = re.compile(r"(\d{1,3})\s*(?:gb|gib|g)\b")
_BARE_NUMBER = re.compile(r"[1-5]0[5-9]0")
_KEY_BEFORE = re.compile(r"(?:port|seed|steps?|len|=|:)\s*$")
_CARD_BEFORE = re.compile(r"(?:\b(?:a|an|one|my|on|single|two|our)|\dx|\d x|\d\s?gb)\s*$")  # "on a 3060"


@dataclass(frozen=True, slots=True)
class GpuMention:
    """A GPU name in the text: the catalog id (None when unknown) and where it was written."""

    gpu: str | None
    start: int
    end: int
    unknown: Unknown | None = None
    box: bool = False  # "DGX H100", "HGX B200": one node of 8


@lru_cache(maxsize=1024)
def resolve(name: str) -> str | None:
    """The catalog id for a GPU spelling, or None."""
    try:
        return find_gpu(name).id
    except UnknownName:
        return None


@lru_cache(maxsize=256)
def closest_gpus(name: str, limit: int = 3) -> tuple[str, ...]:
    """Catalog ids nearest to an unknown GPU: the same class (a consumer "rtx 3060" gets RTX cards,
    an "h800" datacenter ones), then the nearest memory when it was written, then the spelling."""
    consumer = _CONSUMER.search(name) is not None
    stated = _MEMORY.search(name)
    spelled = {gid: rank for rank, gid in enumerate(suggest_gpus(name, limit=64))}

    def distance(gpu: Gpu) -> tuple[bool, float, int]:
        gap = abs(math.log(gpu.memory_bytes_as_sold / 2**30 / float(stated.group(1)))) if stated else 0.0
        return gpu.id.startswith("rtx") != consumer, round(gap, 1), spelled.get(gpu.id, len(spelled))

    return tuple(g.id for g in sorted(all_gpus(), key=distance)[:limit])


def find_gpu_names(scan: Scan) -> list[GpuMention]:
    """Every GPU-like name (up to ``MAX_MATCHES``), known or not, in the unclaimed text."""
    out: list[GpuMention] = []
    view = scan.view()
    for m in _NAME.finditer(view):
        if len(out) >= MAX_MATCHES:
            break
        if not scan.free(m.start("core"), m.end("core")):
            continue
        core = m.group("core")
        bare = _BARE_NUMBER.fullmatch(core) is not None and not m.group("vendor")
        mention = _mention(scan, m)
        if bare and mention.gpu is None and _KEY_BEFORE.search(view[max(0, m.start() - 8):m.start()]):
            continue  # "--port 5050"
        if mention.gpu is not None or not bare or m.group("mem") or m.group("variant") or m.group("plural") \
                or _CARD_BEFORE.search(view[max(0, m.start() - 10):m.start()]):
            out.append(mention)
    return out


def _mention(scan: Scan, m: re.Match[str]) -> GpuMention:
    name = f"{m.group('vendor')} {m.group('core')} {m.group('variant')}"
    mem = (m.group("mem") or "").removesuffix("s")  # "a100-40gbs"
    with_unit = bool(re.search(r"[a-z]", mem))
    gpu = resolve(f"{name} {mem}") if mem else resolve(name)
    end = m.end()
    if gpu is None and mem and not with_unit:  # "h100 64 users": 64 is not its memory
        gpu = resolve(name)
        end = m.start("mem")
    start = m.start()
    memory_first = _MEMORY_FIRST.search(scan.view()[max(0, start - 10):start])  # "a 12gb 2060"
    if memory_first and not mem:  # "8 40gb a100s": the memory written first picks the variant
        sized = resolve(f"{name} {memory_first.group(0).strip()}")
        if sized is not None and sized != gpu:
            return GpuMention(sized, start - len(memory_first.group(0)), end,
                              box=bool(m.group("box")))
    if gpu is not None:
        return GpuMention(gpu, m.start(), end, box=bool(m.group("box")))
    if memory_first and not mem:
        start -= len(memory_first.group(0))
    written = " ".join(scan.text[start:m.end() - len(m.group("plural") or "")].split())
    return GpuMention(None, m.start(), m.end(),
                      Unknown("gpu", safe_echo(written), closest_gpus(written.lower())))
