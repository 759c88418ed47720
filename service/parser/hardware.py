"""GPU mentions with counts and nodes: "8x a100 80gb", "4 nodes of 8xH100", "2x4090",
"one 4090", "1024 H200s", "how many h100s", "an 8xH100 node", "on 64 gpus", "2 nodes".

The GPU name (family, form factor, memory) goes to the core's ``find_gpu``; a count before it
("8x", "two", "a single") or after it ("h100 x8") is ``gpu_count``; "N nodes of M x GPU" gives
``nodes`` and ``gpu_count`` = N x M.
"""

from __future__ import annotations

import re

from service.core.errors import UnknownName
from service.core.hardware.gpus import find_gpu, suggest_gpus
from service.parser.normalize import safe_echo
from service.parser.numbers import COUNT, count
from service.parser.scan import Scan
from service.parser.types import Unknown

_CORE = (r"(?:geforce\s*)?rtx\s*(?:pro\s*)?6000\s*ada|rtx\s*a6000|(?:geforce\s*)?(?:rtx\s*)?[345]090"
         r"|a6000|6000\s*ada|gh200|h200|h100|b200|b100|a100|a10g|a10|a40|l40s|l40|l4|t4|v100"
         r"|mi\s*(?:250x|300x|325x|355x)")
_GPU = re.compile(
    rf"(?:(?<=\dx)|(?<=\d x)|(?<![a-z0-9]))(?:nvidia\s*|amd\s*|instinct\s*|tesla\s*)?(?P<core>{_CORE})"
    r"(?P<plural0>s(?=[\s\-_]))?(?P<variant>(?:[\s\-_]*(?:sxm\d?|pcie|nvl|hbm3e?|ada))*)"
    r"(?P<mem>[\s\-_]*(?:\d{2,3})\s*(?:gb|gib|g)(?![a-z0-9])|[\s\-_]+(?:16|24|32|40|48|64|80|94|96|141|180|192|256)(?![\w.%]))?"
    r"(?P<plural>s|'s)?(?![a-z0-9])"
)
_BEFORE = re.compile(
    rf"(?:(?<![\w.])(?P<nodes>{COUNT})\s*(?:x|\*)?\s*(?:nodes?|machines?|servers?|boxes|hosts)\s*"
    r"(?:of|with|x|\*|,|each with)?\s*)?"
    rf"(?:(?<![\w.])(?P<count>{COUNT})\s*(?:x|\*|-)?\s*(?:of\s+(?:those|these|the|them|our)\s+)?)?"
    r"(?:\d{2,3}\s*gb\s+)?$"
)
_AFTER_COUNT = re.compile(r"^\s*(?:x|\*)\s*(?P<count>\d+)\b")
_AFTER_NODE = re.compile(r"^\s*(?:gpus?\s*)?(?P<word>nodes?|machines?|servers?|boxes|box|hosts?)\b"
                         r"(?:\s*(?:of|with)\s*(?P<per>\d+)\s*(?:gpus?)?)?")
_ALTERNATIVE = re.compile(r"(?<![\w.])(?P<n>\d+)\s*(?:x\s*)?(?:or|vs\.?|versus)\s*$")
_EACH = re.compile(r"^\s*(?:gpus?\s*)?each\b")
_HOW_MANY = re.compile(r"\bhow\s+many\b|\bmin(?:imum)?\s+(?:number\s+of\s+)?(?:gpus?|cards)\b"
                       r"|\bfewest\b|\bhow\s+much\s+(?:gpus?|hardware|compute)\b")
_GENERIC_GPUS = re.compile(rf"(?<![\w.])(?P<count>{COUNT})\s*(?:x\s*)?"
                           r"(?:gpus?|cards?|devices|accelerators|ranks)\b"
                           r"(?P<each>\s*(?:per\s+node|each|a\s+node|per\s+box))?")
_GENERIC_NODES = re.compile(rf"(?<![\w.])(?P<nodes>{COUNT})\s*(?:x\s*)?"
                            r"(?:nodes?|machines?|servers?|boxes|hosts)\b")
_OTHER_GPU = re.compile(
    r"(?:(?<=\dx)|(?<=\d x)|(?<![\w.\-]))(?P<name>(?:nvidia\s+|geforce\s+)?(?:rtx\s*)?"
    r"(?:[ahlbp]\d{2,3}[ac-z]?|[1-5]0[5-8]0(?:\s*ti)?|a[2-6]000|mi\d{3}x?|v\d{3}|k80|tpu\s*v\d\w*))"
    r"(?:s|'s)?(?![\w.])")
# "fit on 24gb", "a single 80 GB card": memory without a GPU name reads as the common GPU of
# that size, and the reply says which.
_MEMORY_ONLY = re.compile(
    r"(?:\b(?:on|in|into|with|under|fit|fits)\s+(?:a\s+|one\s+|single\s+|an?\s+single\s+)?"
    r"|(?<![\w.]))(?P<mem>16|24|32|40|48|80|141|192)\s*(?:gb|gib|g)\b"
    r"(?=\s*(?:gpus?|cards?|vram|of\s+vram|\?|$|,|\.|\s+(?:gpu|card|with|for|and|at)\b))")
GPU_FOR_MEMORY = {16: "t4-16gb", 24: "rtx4090-24gb", 32: "rtx5090-32gb", 40: "a100-40gb",
                  48: "l40s-48gb", 80: "h100-80gb", 141: "h200-141gb", 192: "mi300x-192gb"}
_SINGLE_NODE = re.compile(r"\b(?:single|one)[\s\-]node\b")
_NODES_X_GPUS = re.compile(
    rf"(?<![\w.])(?P<nodes>{COUNT})\s*(?:x\s*)?(?:nodes?|machines?|servers?|boxes|hosts)\s*"
    rf"(?:of|with|x|\*|,|each\s+with)?\s*(?P<per>{COUNT})\s*(?:x\s*)?(?:gpus?|cards?|devices)\b(?:\s*each)?")


def _gpu_name(m: re.Match[str]) -> str:
    name = m.group("core") + " " + (m.group("variant") or "")
    mem = re.sub(r"[^0-9]", "", m.group("mem") or "")
    return name + (f" {mem}gb" if mem else "")


def find_hardware(scan: Scan) -> None:
    """Add ``gpu``, ``gpu_count``, ``nodes`` findings; ``_how_many`` when asked for the count."""
    view = scan.view()
    if _HOW_MANY.search(view):
        scan.add("_how_many", True, claim=False)
    for m in scan.finditer(_GPU):
        if not scan.free(m.start(), m.end()):
            continue
        written = m.group(0).strip()
        try:
            gpu = find_gpu(_gpu_name(m)).id
        except UnknownName as exc:
            scan.add("_unknown", Unknown("gpu", safe_echo(written), tuple(exc.suggestions)),
                     m.start(), m.end())
            continue
        _counts(scan, m, gpu)
    for m in scan.finditer(_OTHER_GPU):
        if scan.free(m.start(), m.end()) and not _known(m.group("name")):
            _unknown_gpu(scan, m)
            break  # one question back is enough
    if not scan.values("gpu") and not any(isinstance(u, Unknown) and u.kind == "gpu"
                                          for u in scan.values("_unknown")):
        _memory_only(scan)
    _generic(scan)


def _memory_only(scan: Scan) -> None:
    """A memory size with no GPU name ("does it fit on 24gb"): the common GPU of that size."""
    for m in scan.finditer(_MEMORY_ONLY, limit=1):
        if not scan.free(m.start("mem"), m.end()):
            continue
        gpu = find_gpu(GPU_FOR_MEMORY[int(m.group("mem"))])
        scan.add("gpu", gpu.id, m.start("mem"), m.end(),
                 f"{m.group('mem')} GB read as one {gpu.name}; name the GPU if it is another")
        if not scan.values("gpu_count"):
            scan.add("gpu_count", 1, m.start("mem"), m.end())
        return


def _known(name: str) -> bool:
    try:
        find_gpu(name)
    except UnknownName:
        return False
    return True


def _unknown_gpu(scan: Scan, m: re.Match[str]) -> None:
    """A GPU-like name the catalog lacks ("h800", "rtx 4080"): ask, but keep its count."""
    name = m.group("name")
    scan.add("_unknown", Unknown("gpu", safe_echo(name), tuple(suggest_gpus(name))), m.start(), m.end())
    before = _BEFORE.search(scan.view()[max(0, m.start() - 60):m.start()])
    if before and before.group("count") and not before.group("nodes"):
        value = count(before.group("count"))
        if value is not None:
            scan.add("gpu_count", value, m.start() - len(before.group(0)), m.start())


def _counts(scan: Scan, m: re.Match[str], gpu: str) -> None:
    view = scan.view()
    start, end = m.start(), m.end()
    before = _BEFORE.search(view[max(0, start - 60):start])
    nodes = count(before.group("nodes")) if before and before.group("nodes") else None
    per = count(before.group("count")) if before and before.group("count") else None
    if before and (nodes or per):
        start = start - len(before.group(0))
    alternative = _ALTERNATIVE.search(view[max(0, start - 24):start]) if per is not None else None
    if alternative is not None and count(alternative.group("n")) is not None:
        alt_start = start - len(alternative.group(0))  # "8 or 16 h100s": compare the counts
        scan.add("gpu_count", count(alternative.group("n")), alt_start, start)
        start = alt_start
    after_count = _AFTER_COUNT.match(view[end:end + 12])
    if per is None and after_count:
        per = count(after_count.group("count"))
        end += after_count.end()
    node_word = _AFTER_NODE.match(view[end:end + 40])
    if node_word and nodes is None:
        end += node_word.end()
        if node_word.group("per"):  # "8 h100 nodes of 8 gpus"
            nodes, per = per, count(node_word.group("per"))
        elif node_word.group("word").endswith("s") or node_word.group("word") == "boxes":
            nodes, per = per, None  # "8 h100 nodes": 8 nodes
        else:
            nodes = 1  # "an 8xh100 node", "a h100 node"
            per = per if per and per > 1 else None
    elif _EACH.match(view[end:end + 12]) and nodes is None:
        end += _EACH.match(view[end:end + 12]).end()  # type: ignore[union-attr]
    scan.add("gpu", gpu, m.start(), m.end())
    scan.claim(start, end)
    total = per * nodes if per is not None and nodes is not None else per
    scan.add("_gpu_mention", {"gpu": gpu, "gpu_count": total, "nodes": nodes}, m.start(), m.end())
    if nodes is not None:
        scan.add("nodes", nodes, start, end)
    if total is not None:
        note = f"{nodes} nodes x {per} GPUs = {total} GPUs" if nodes and nodes > 1 else ""
        scan.add("gpu_count", total, start, end, note)


def _generic(scan: Scan) -> None:
    """Counts without a GPU name: "on 64 gpus", "2 nodes", "8 gpus per node", "single node"."""
    per_node: int | None = None
    total: int | None = None
    nodes: int | None = None
    for m in scan.finditer(_NODES_X_GPUS):
        nodes, per_node = count(m.group("nodes")), count(m.group("per"))
        scan.claim(m.start(), m.end())
    for m in scan.finditer(_GENERIC_GPUS):
        value = count(m.group("count"))
        if value is None or not scan.free(m.start(), m.end()):
            continue
        if m.group("each"):
            per_node = value
        else:
            total = value
        scan.claim(m.start(), m.end())
    for m in scan.finditer(_GENERIC_NODES):
        if scan.free(m.start(), m.end()):
            nodes = count(m.group("nodes"))
            scan.claim(m.start(), m.end())
    if nodes is None and _SINGLE_NODE.search(scan.view()):
        nodes = 1
    known_nodes = nodes or next((v for v in scan.values("nodes") if isinstance(v, int)), None)
    if nodes is not None:
        scan.add("nodes", nodes)
    if total is not None:
        scan.add("gpu_count", total)
    elif per_node is not None and known_nodes is not None:
        scan.add("gpu_count", per_node * known_nodes,
                 note=f"{known_nodes} nodes x {per_node} GPUs = {per_node * known_nodes} GPUs")
    elif per_node is not None:
        scan.add("gpus_per_node", per_node)
