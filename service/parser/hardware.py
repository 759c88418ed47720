"""GPU mentions with their counts and nodes: "8x a100 80gb", "4 nodes of 8xH100", "2x4090",
"one 4090", "1024 H200s", "h100 x8", "an 8xH100 node", "8 h100s per node", "8 or 16 h100s", and
cloud instance names ("p4d.24xlarge", ``instances``).

Names come from ``gpu_names`` (the catalog decides); a count written before the name ("8x",
"two", "a single", "8 of those") or after it ("h100 x8") is ``gpu_count``; "N nodes of M x GPU"
gives ``nodes`` and ``gpu_count`` = N x M; "M x GPU per node" gives ``gpus_per_node``. Counts
without a GPU name ("on 64 gpus", "2 nodes") are the binder's. An unknown name is asked about,
with its count kept.
"""

from __future__ import annotations

import re
from dataclasses import replace

from service.core.hardware.gpus import all_gpus, find_gpu
from service.parser.binding import Item, bind, items
from service.parser.gpu_names import GpuMention, find_gpu_names, resolve
from service.parser.instances import find_instances
from service.parser.normalize import safe_echo
from service.parser.not_covered import names_uncovered_hardware
from service.parser.numbers import COUNT, count
from service.parser.scan import Scan
from service.parser.tokens import tokenize
from service.parser.vocabulary import Cue

# A count and the name are on one line, in one cell: "micro batch 1\nrtx 3090 gpus" and
# "global bs 256\ta100 gpus" have no count.
_BEFORE = re.compile(
    rf"(?:(?<![\w.])(?P<nodes>{COUNT})[ \t]*(?:x|\*)?[ \t]*"
    r"(?:nodes?|machines?|servers?|boxes|hosts|instances|pods)[ \t]*"
    r"(?:of|with|x|\*|,|each with)?[ \t]*)?"
    # "2x8 h100", "2 x 8xH100": nodes x GPUs per node; "4 8xH100 nodes" (kept only when a node
    # word follows the name)
    r"(?:(?<![\w.])(?P<outer_x>\d+)[ \t]*[x*×][ \t]*(?=\d+(?:[ \t]{0,3}[x*×]|-| ))"
    rf"|(?<![\w.])(?P<outer>{COUNT})[ \t]+(?=\d+[ \t]*[x*×]))?"
    rf"(?:(?:(?<![\w.])|(?<=[x*×]))(?P<count>{COUNT})(?:[ \t]{{0,3}}[x*×][ \t]{{0,3}}|-| {{1,3}})"
    r"(?:of[ \t]+(?:those|these|the|them|our)[ \t]+)?)?"
    r"(?:\d{2,3}[ \t]*gb(?:[ \t]+|[ \t]*\([ \t]*))?$"
)
_AFTER_COUNT = re.compile(r"^\s*(?:x|\*|×)\s*(?P<count>\d+)\b")
_AFTER_NODE = re.compile(r"^\s*(?:gpus?\s*)?"
                         r"(?P<word>nodes?|machines?|servers?|boxes|box|hosts?|instances?|pods?|trays?)\b"
                         r"(?:\s*(?:of|with)\s*(?P<per>\d+)\s*(?:gpus?)?)?")
# "8 or 16 h100s", "8x vs 16x h100", "1, 2 and 4 h100s" (a list: ", and" alone joins clauses)
_ALTERNATIVE = re.compile(r"(?<![\w.])(?P<n>\d+(?:\s*x?\s*,\s*\d+)*)\s*(?:x\s*)?,?\s*(?:or|vs\.?|versus)\s*$"
                          r"|(?<![\w.])(?P<list>\d+(?:\s*x?\s*,\s*\d+)+)\s*(?:x\s*)?and\s*$")
_WITH_MEMORY = re.compile(r"\d\s?(?:gb|gib|g)\b|[\-_]\d{2,3}s?\s*$")  # "a100-80s"
_PER_NODE = re.compile(
    r"^\s*(?:gpus?\s*)?(?:each|per\s+(?:node|box|machine|server|host|instance|pod)|a\s+node)\b")
# "how many" of something else ("how many days", "how many users") does not ask for GPUs
_HOW_MANY = re.compile(
    r"\bhow\s+many\b(?!\s+(?:more\s+)?(?:days?|hours?|weeks?|months?|years?|users?|people|ppl|requests?"
    r"|reqs|sequences?|seqs|tokens?|concurrent|sessions?|streams?|layers?|params?|parameters|steps?"
    r"|epochs?|samples?|images?|times?|gb|gigs?|bytes?|dollars?)\b)"
    r"|\bmin(?:imum)?\s+(?:number\s+of\s+|no\.?\s+of\s+|#\s*(?:of\s+)?)?(?:gpus?|cards)\b"
    r"|\bmin(?:imum)?\s+(?:number|no\.?)\s+of\b|\bleast\s+(?:number|amount)\s+of\b"
    r"|\bnumber\s+of\s+\S+\s+(?:needed|required)\b|\bmin\s+\S*\d\S*s\b"
    r"|\bfewest\b|\bhow\s+much\s+(?:gpus?|hardware|compute)\b")
# "fit on 24gb", "a single 80 GB card": memory without a GPU name reads as the common GPU of
# that size, and the reply says which.
_GPU_CUE = Cue((("gpu_count", "B"),))
_MEMORY_ONLY = re.compile(
    r"(?:\b(?:on|in|into|with|under|fit|fits)\s+(?:a\s+|one\s+|single\s+|an?\s+single\s+)?"
    r"|(?<![\w.])|(?<=\dx))(?P<mem>16|24|32|40|48|80|141|192)\s*(?:gb|gib|g|gigs?|gigabytes?)\b"
    r"(?=\s*(?:gpus?|cards?|vram|of\s+vram|each|\?|$|,|\.|\s+(?:gpu|card|with|for|and|at|enough|total)\b"
    r"|\s*(?:per|a|/)\s*(?:gpu|card|device|rank)\b))")
_COLAB = re.compile(r"\bcolab\b")  # a Colab runtime has one GPU
_ONE_CARD = re.compile(r"\b(?:an?|one|single|1)\s+(?:single\s+)?\d{2,3}\s?(?:gb|gib|g)\s+(?:card|gpu)\b")
GPU_FOR_MEMORY = {16: "t4-16gb", 24: "rtx4090-24gb", 32: "rtx5090-32gb", 40: "a100-40gb",
                  48: "l40s-48gb", 80: "h100-80gb", 141: "h200-141gb", 192: "mi300x-192gb"}


def find_hardware(scan: Scan) -> None:
    """Add ``gpu``, ``gpu_count``, ``nodes``, ``gpus_per_node`` findings; ``_how_many`` when asked
    for the count; ``_unknown`` for a GPU the catalog lacks."""
    if _HOW_MANY.search(scan.view()):
        scan.add("_how_many", True, claim=False)
    find_instances(scan)
    asked = False
    for mention in find_gpu_names(scan):
        if mention.gpu is not None:
            _counts(scan, mention, mention.gpu)
        elif not asked:  # one question back is enough
            asked = True
            scan.add("_unknown", mention.unknown, mention.start, mention.end)
            _counts(scan, mention, None)
        else:
            scan.claim(mention.start, mention.end)
    if not scan.values("gpu") and not asked and not names_uncovered_hardware(scan.view()):
        _memory_only(scan)
        return
    if (one := _ONE_CARD.search(scan.view()) or _ON_ONE.search(scan.view())) is not None:
        scan.add("_one_gpu", True, one.start(), one.end(), claim=False)
    _memory_cap(scan)
    _named_memory(scan)


# "on a 24gb card (a10g)" is _ONE_CARD; with the GPU named: "fits on one?", "is one enough?"
_ON_ONE = re.compile(
    r"\b(?:on|with)\s+(?:just\s+|only\s+)?(?:one|a\s+single)(?:\s+(?:of\s+(?:them|those|these)|gpu|card))?"
    r"\s*(?:\?|$|[,.;!])"
    r"|\b(?:is|would)\s+(?:just\s+)?one\s+(?:be\s+)?(?:enough|sufficient)\b"
    # "MI300X: can a single one serve it?" (not "can one serve", a person)
    r"|\b(?:can|could|will|would)\s+(?:a\s+single|just\s+one)(?:\s+one)?\s+(?:serve|run|hold|fit|handle)\b")
# a memory beside a GPU name, not the host's or a share of it ("24gb of system ram", "for kv")
_MEMORY_WRITTEN = re.compile(r"(?<![\w.])(\d{1,3})\s?(?:gb|gib|g)\b(?!\s*(?:of\s+)?(?:system|host|cpu|"
                             r"ram|dram|memory\s+for|for|kv|left|free|spare)\b)")
NAMED_MEMORY_NEAR = 16  # characters between the memory and the GPU name: "16gb (rtx 4080)"


# "keep it under 40gb per gpu" on a named GPU: a budget below the card (shared GPUs, a MIG slice)
_CAP = re.compile(
    r"(?:\b(?:under|below|within|at\s+most|max(?:imum)?|no\s+more\s+than|less\s+than)|<=?)"
    r"\s*(?P<mem>\d{1,3}(?:\.\d+)?)\s?(?:gb|gib|g)\b"
    r"(?:\s*(?:per|a|/|on\s+each|each)\s*(?:gpu|card|device|rank)\b)?"
    r"|\b(?:only|just)\s+(?:have\s+)?(?P<free>\d{1,3}(?:\.\d+)?)\s?(?:gb|gib|g)\s+"
    r"(?:free|available|left|usable)\b(?:\s*(?:per|a|/|on\s+each|each)\s*(?:gpu|card|device)\b)?")
MIN_CAP_SHARE = 0.05  # the request's floor for memory_headroom (request.py FLOAT_RANGES)


def _memory_cap(scan: Scan) -> None:
    """A memory limit under the named card's: the planner's memory budget (``memory_headroom``,
    the cap's share of the card's usable memory), said in the assumptions."""
    names = [f.value for f in scan.findings if f.field == "gpu" and isinstance(f.value, str)]
    if len(set(names)) != 1 or scan.values("memory_headroom"):
        return
    gpu = find_gpu(names[0])
    sold = gpu.memory_bytes_as_sold / 2**30  # "80" of "80GB"
    for m in scan.finditer(_CAP, limit=1):
        group = "mem" if m.group("mem") else "free"
        if not scan.free(m.start(group), m.end(group)):
            continue
        written = float(m.group(group))
        share = round(written * 1e9 / gpu.memory_bytes_usable, 3)
        if written >= sold - 0.5 or share < MIN_CAP_SHARE:  # the card itself, or no per-GPU cap
            return
        scan.add("memory_headroom", share, m.start(), m.end(),
                 f"'{safe_echo(m.group(0).strip())}' read as a budget of {m.group(group)} GB per "
                 f"GPU: {share:.0%} of the {gpu.name}'s {gpu.memory_bytes_usable / 1e9:.1f} GB")
        return


def _named_memory(scan: Scan) -> None:
    """"on 16gb (rtx 4080)": a memory written just beside the GPU named, and the same as its
    memory, says the same thing (used, not reported as ignored); another size of the same card,
    where the name alone left its memory open ("V100s (4 of them, 32GB)"), picks that variant."""
    for m in scan.finditer(_MEMORY_WRITTEN):
        if not scan.free(m.start(), m.end()):
            continue
        size = f"{m.group(1)}gb"
        for i, f in enumerate(scan.findings):
            if f.field != "gpu" or not isinstance(f.value, str) or not (
                    0 <= f.start - m.end() <= NAMED_MEMORY_NEAR
                    or 0 <= m.start() - f.end <= NAMED_MEMORY_NEAR):
                continue
            other = _other_size(f.value, size) if f.note and not f.value.endswith(size) else None
            if f.value.endswith(f"-{size}") or other is not None:
                if other is not None:
                    scan.findings[i] = replace(f, value=other, note="")
                    _retarget_mention(scan, f.value, other)
                scan.claim(m.start(), m.end())
                break


def _other_size(gpu: str, size: str) -> str | None:
    """The catalog's variant of ``gpu``'s card with that memory ("v100-16gb", "32gb")."""
    family = gpu.split("-")[0]
    return next((g.id for g in all_gpus() if g.id.split("-")[0] == family
                 and g.id.endswith(f"-{size}")), None)


def _retarget_mention(scan: Scan, old: str, new: str) -> None:
    for i, f in enumerate(scan.findings):
        if f.field == "_gpu_mention" and isinstance(f.value, dict) and f.value.get("gpu") == old:
            scan.findings[i] = replace(f, value={**f.value, "gpu": new})


def _memory_only(scan: Scan) -> None:
    """A memory size with no GPU name ("does it fit on 24gb"): the common GPU of that size."""
    for m in scan.finditer(_MEMORY_ONLY, limit=1):
        if not scan.free(m.start("mem"), m.end()):
            continue
        gpu = find_gpu(GPU_FOR_MEMORY[int(m.group("mem"))])
        before = _BEFORE.search(scan.view()[max(0, m.start("mem") - 30):m.start("mem")])
        per = count(before.group("count")) if before and before.group("count") else None
        start = m.start("mem") - len(before.group(0)) if before and per else m.start("mem")
        scan.add("gpu", gpu.id, start, m.end(),
                 f"{m.group('mem')} GB read as {gpu.name}; name the GPU if it is another")
        if per is not None:
            scan.add("gpu_count", per, start, m.end())
        else:  # "fits on 24gb" is one card, unless a count is said elsewhere ("4 gpus with 24gb each")
            scan.add("_one_gpu", True, start, m.end(), claim=False)
        return


def _default_variant(scan: Scan, mention: GpuMention, gpu: str) -> str:
    """"A100" with no memory said: which variant it was read as, when the family has others of
    another size (A100 40GB, V100 32GB, H100 NVL)."""
    written = scan.text[mention.start:mention.end]
    if _WITH_MEMORY.search(written.lower()):
        return ""
    chosen = find_gpu(gpu)
    family = gpu.split("-")[0]
    if not any(g.id.split("-")[0] == family and g.memory_bytes_as_sold != chosen.memory_bytes_as_sold
               for g in all_gpus()):
        return ""
    return f"'{safe_echo(written.strip())}' read as {chosen.name}; say its memory if it is another"


def _taken(marked: str, at: int, end: int) -> bool:
    """The number at ``at:end`` before a GPU name belongs to a key before it ("ctx 32768 t4",
    "concurrency=100 rtx4090"), not to the GPU: the binder decides, with the GPU name as one more
    cue that takes a count before it ("8k context 64 rtx4090": the context has its number)."""
    if re.match(r"\s*\d+\s*[x*]", marked[at:end + 3]):  # "16x mi300x" is a count
        return False
    seq = items(tokenize(marked[max(0, at - 60):end]))
    if not seq or seq[-1].kind != "num":
        return False
    after = seq[-1].end + 1  # the GPU name, a space after the number
    seq.append(Item("cue", after, after, "<gpu>", cue=_GPU_CUE))
    number = len(seq) - 2
    return any(b.index == number and b.attribute != "gpu_count"
               and not b.attribute.startswith(("unused.", "unsupported.")) for b in bind(seq))


_NODE_AFTER = re.compile(r"^\s*(?:gpus?\s+)?(?:nodes?|boxes|servers?|machines?|instances|pods)\b")
# "nodes of 8x", "hosts with 8x" (a claimed model name between leaves a gap: "host <model> with")
_NODES_OF = re.compile(r"\b(?:nodes?|boxes|machines?|servers?|hosts?|instances?|pods?)[ \t]{1,2}"
                       r"(?:of|with)\s*$")
_MY = re.compile(r"\b(?:my|our)\s+(?:own\s+|trusty\s+|old\s+|new\s+)?$")


def _plural(name: str) -> bool:
    """"3090s", "a100's": more than one card ("l40s" is one L40S)."""
    name = name.strip()
    if name.endswith("'s"):
        return True
    if not name.endswith("s"):
        return False
    singular = resolve(name[:-1])
    return singular is not None and singular == resolve(name)


def _outer_nodes(before: re.Match[str] | None, after: str) -> int | None:
    """The node count written before a node's GPU count: "2x8 h100", "2 x 8xH100" always;
    "4 8xh100" only with a node word after the name ("4 8xh100 nodes")."""
    if before is None:
        return None
    if before.group("outer_x"):
        return count(before.group("outer_x"))
    node_word = _AFTER_NODE.match(after)
    if before.group("outer") and node_word and node_word.group("word").endswith(("s", "boxes")):
        return count(before.group("outer"))
    return None


def _counts(scan: Scan, mention: GpuMention, gpu: str | None) -> None:
    view = scan.view()
    start, end = mention.start, mention.end
    base = max(0, start - 60)
    before = _BEFORE.search(view[base:start])
    nodes = count(before.group("nodes")) if before and before.group("nodes") else None
    per = count(before.group("count")) if before and before.group("count") else None
    outer = _outer_nodes(before, view[end:end + 40]) if per is not None and not nodes else None
    if outer is not None:  # "2x8 h100", "4 8xh100 nodes": nodes of a node's GPUs
        nodes = outer
    elif before and (before.group("outer") or before.group("outer_x")):
        base += before.start("count")  # not a node count: read from the GPUs' count on
        before = _BEFORE.search(view[base:start])
    if before and per is not None and not nodes and _AFTER_COUNT.match(view[end:end + 12]):
        per = None  # "batch 2 a100 x 64": the count is after the name
    elif before and per is not None and not nodes \
            and _taken(scan.marked(), base + before.start("count"), base + before.end("count")):
        per = None  # "context 32768 T4 x2": 32768 is the context's
    elif before and (nodes or per):
        start = start - len(before.group(0))
    alternative = _ALTERNATIVE.search(view[max(0, start - 30):start]) if per is not None else None
    if alternative is not None:  # "8 or 16 h100s", "1, 2 and 4 h100s": the counts to compare
        alt_start = start - len(alternative.group(0))
        for n in re.findall(r"\d+", alternative.group("n") or alternative.group("list")):
            scan.add("gpu_count", int(n), alt_start, start)
        start = alt_start
    after_count = _AFTER_COUNT.match(view[end:end + 12])
    if per is None and after_count:
        per = count(after_count.group("count"))
        end += after_count.end()
    if per is None and nodes is None and _MY.search(view[max(0, start - 12):start]) \
            and not _plural(view[mention.start:mention.end]):
        per = 1  # "on my 3090", "our a100": one card
    elif per is None and nodes is None and gpu is not None \
            and ("GeForce" in find_gpu(gpu).name or _COLAB.search(view)) \
            and not _plural(view[mention.start:mention.end]) \
            and not _NODE_AFTER.match(view[end:end + 12]):
        # "on rtx 3060 12gb": a desktop card named in the singular is one card, as is a Colab
        # runtime's (a datacenter GPU's bare name names a type: "train 70b on h100")
        scan.add("_one_gpu", True, mention.start, mention.end, claim=False)
    # "how many nodes of 8x h100", "8xh100 boxes": the count is one node's
    per_node = bool(before and per is not None and not nodes and _NODES_OF.search(
        view[max(0, base + before.start("count") - 24):base + before.start("count")]))
    x_written = bool(before and per is not None and re.search(r"\d\s*[x*×]\s*$", before.group(0)))
    node_word = _AFTER_NODE.match(view[end:end + 40])
    if node_word and outer is not None and not node_word.group("per"):
        end += node_word.end()  # "4 8xh100 nodes": the node word is read
    elif node_word and nodes is None:
        end += node_word.end()
        if node_word.group("per"):  # "8 h100 nodes of 8 gpus"
            nodes, per = per, count(node_word.group("per"))
        elif (node_word.group("word").endswith("s") or node_word.group("word") == "boxes") \
                and x_written and per is not None and per > 1:
            per_node = True  # "8xh100 nodes": nodes of 8, how many is not said
        elif node_word.group("word").endswith("s") or node_word.group("word") == "boxes":
            nodes, per = per, None  # "8 h100 nodes": 8 nodes
        else:
            nodes = 1  # "an 8xh100 node", "a h100 node"
            per = per if per and per > 1 else None
    elif nodes is None and (each := _PER_NODE.match(view[end:end + 16])) and not (
            each.group(0).strip() == "each" and _WITH_MEMORY.search(scan.low[mention.start:mention.end])):
        end += each.end()  # "8 h100s per node", "8 a100s each" ("4x 3090 (24GB each)": the memory's)
        per_node = per is not None
    if gpu is not None:
        scan.add("gpu", gpu, mention.start, mention.end, _default_variant(scan, mention, gpu))
    scan.claim(start, end)
    if mention.box:  # "a DGX H100", "2 HGX B200 nodes": boxes of 8
        nodes, per = nodes or per or 1, 8
    total = per * nodes if per is not None and nodes is not None else per
    if gpu is not None:
        scan.add("_gpu_mention", {"gpu": gpu, "gpu_count": total, "nodes": nodes}, mention.start, mention.end)
    if nodes is not None:
        scan.add("nodes", nodes, start, end)
    if per_node and total is not None:
        scan.add("gpus_per_node", total, start, end)
    elif total is not None:
        note = f"{nodes} nodes x {per} GPUs = {total} GPUs" if nodes and nodes > 1 else ""
        scan.add("gpu_count", total, start, end, note)
