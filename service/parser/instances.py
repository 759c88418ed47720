"""Cloud instance names as the GPUs they carry: "p4d.24xlarge" is 8x A100 40GB, "g5.xlarge" one
A10G, "a3-highgpu-8g" 8x H100, "g2-standard-24" two L4s, Azure's "ND H100 v5" 8x H100; a
"GB200 NVL72" rack 72 GB200s. Said back in a note; an id the catalog no longer has is left alone
(the catalog decides).
"""

from __future__ import annotations

import re

from service.parser.gpu_names import resolve
from service.parser.numbers import WORD, count
from service.parser.scan import Scan

# "2 p5.48xlarge", "two p5s", "2 nodes of a3-highgpu-8g": nodes
_MANY = (rf"(?:\b(?P<many>\d{{1,4}}|{WORD})\s*(?:x\s*)?"
         r"(?:(?:nodes?|instances?|vms?|machines?|servers?|boxes)\s+(?:of\s+)?)?)?")
# "g6e instances": the family without a size names the GPU, not how many
_AWS = re.compile(_MANY + r"\b(?P<family>p4de|p4d|p5en|p5e|p5|p3dn|p3|g6e|g6|g5|g4dn)"
                  r"(?:\.(?P<size>\d*x?large|metal)\b|(?=s?\s+(?:instances?|nodes?|boxes|box|vms?|"
                  r"machines?|fleet|cluster)\b))")
_GCP = re.compile(_MANY + r"\b(?:(?:a2-(?P<a2>high|mega|ultra)gpu|a3-(?P<a3>high|mega|edge|ultra)gpu)"
                  r"-(?P<n>\d{1,2})g|g2-standard-(?P<g2>\d{1,2}))\b")
# Azure: "ND H100 v5" is 8x H100; "NDm A100 v4" 8x A100 80GB, "ND A100 v4" 8x A100 40GB
# and their SKUs: "ND96isr H100 v5", "Standard_ND96amsr_A100_v4" (the "m": 80 GB), "ND96asr_v4"
_AZURE = re.compile(_MANY + r"\b(?:standard_)?(?P<nd>ndm?)(?:\d{2,3}(?P<sku>[a-z]{1,6}))?[\s\-_]?"
                    r"(?P<chip>h100|h200|a100|mi300x)[\s\-_]?v[45]\b|\b(?:standard_)?(?P<asr>nd96asr)[\s\-_]?v4\b")
_AZURE_GPU = {"h100": "h100-80gb", "h200": "h200-141gb", "mi300x": "mi300x-192gb"}
# rack-scale NVLink systems: "GB200 NVL72" is 72 GPUs on one NVLink domain ("2 nvl72 racks": 144)
_NVL = re.compile(_MANY + r"\b(?:gb200[\s\-_]*)?nvl[\s\-_]?(?P<rack>72|36)(?:[\s\-_]*(?:racks?|systems?))?\b")
_AWS_GPU = {"p4d": "a100-40gb", "p4de": "a100-80gb", "p5": "h100-80gb", "p5e": "h200-141gb",
            "p5en": "h200-141gb", "p3": "v100-16gb", "p3dn": "v100-32gb", "g5": "a10g-24gb", "g6": "l4-24gb",
            "g6e": "l40s-48gb", "g4dn": "t4-16gb"}
# "g5 or g6e?": two AWS families named bare to be compared, each its GPU type
_FAMILY = r"(p4de|p4d|p5en|p5e|p5|p3dn|p3|g6e|g6|g5|g4dn)"
_AWS_PAIR = re.compile(rf"\b{_FAMILY}s?\s*(?:,|or|vs\.?|versus|/)\s*{_FAMILY}s?\b(?![.\-])")
# the families whose instances come with 8 GPUs, and the size that holds them
_EIGHT_SIZE = {"p4d": "24xlarge", "p4de": "24xlarge", "p5": "48xlarge", "p5e": "48xlarge",
               "p5en": "48xlarge", "p3dn": "24xlarge"}
# "we're on AWS p5", "ec2 p4de": an 8-GPU family named bare after its cloud (longest name first)
_AWS_ON = re.compile(r"\b(?:aws|ec2|amazon)\s+(?P<family>"
                     + "|".join(sorted(_EIGHT_SIZE, key=len, reverse=True)) + r")s?\b(?![.\-])")
_AWS_COUNT = {"12xlarge": 4, "24xlarge": 4, "48xlarge": 8, "metal": 8, "8xlarge": 1, "16xlarge": 1}
_P3_COUNT = {"2xlarge": 1, "8xlarge": 4, "16xlarge": 8}
_G2_COUNT = {24: 2, 48: 4, 96: 8}


def find_instances(scan: Scan) -> None:
    """Add ``gpu`` and ``gpu_count`` for each cloud instance name."""
    for m in scan.finditer(_AWS, limit=2):
        family, size = m.group("family"), m.group("size")
        sizes = _P3_COUNT if family == "p3" else _AWS_COUNT
        if size is None and family not in _EIGHT_SIZE:
            scan.add("gpu", _AWS_GPU[family], m.start(), m.end(),
                     f"{family} = {_AWS_GPU[family]} (name the size for the GPU count)")
            continue
        _add(scan, m, _AWS_GPU[family], 8 if family in _EIGHT_SIZE else sizes.get(size, 1))
        scan.add("_instance", f"{family}.{size or _EIGHT_SIZE[family]}", m.start(), m.end(),
                 claim=False)
    for m in scan.finditer(_AWS_ON, limit=1):  # "we're on AWS p5": the type and its node
        if scan.free(m.start("family"), m.end("family")):
            family = m.group("family")
            scan.add("gpu", _AWS_GPU[family], m.start("family"), m.end("family"),
                     f"AWS {family} = {_AWS_GPU[family]}, 8 per {family}.{_EIGHT_SIZE[family]}")
            scan.add("gpus_per_node", 8, m.start("family"), m.end("family"), claim=False)
            scan.add("_instance", f"{family}.{_EIGHT_SIZE[family]}", m.start(), m.end(),
                     claim=False)
    for m in scan.finditer(_AWS_PAIR, limit=1):
        for side in (1, 2):
            family = m.group(side)
            scan.add("gpu", _AWS_GPU[family], m.start(side), m.end(side),
                     f"{family} = {_AWS_GPU[family]}")
            scan.add("_gpu_mention", {"gpu": _AWS_GPU[family], "gpu_count": None, "nodes": None},
                     m.start(side), m.end(side))
    for m in scan.finditer(_GCP, limit=2):
        if m.group("g2"):
            _add(scan, m, "l4-24gb", _G2_COUNT.get(int(m.group("g2")), 1))
        elif m.group("a2"):
            _add(scan, m, "a100-80gb" if m.group("a2") == "ultra" else "a100-40gb", int(m.group("n")))
        else:
            _add(scan, m, "h200-141gb" if m.group("a3") == "ultra" else "h100-80gb", int(m.group("n")))
    for m in scan.finditer(_AZURE, limit=2):
        chip = m.group("chip") or "a100"
        a100 = "a100-80gb" if m.group("nd") == "ndm" or "m" in (m.group("sku") or "") \
            else "a100-40gb"
        _add(scan, m, _AZURE_GPU.get(chip, a100), 8)
    for m in scan.finditer(_NVL, limit=2):
        _add(scan, m, "gb200-186gb", int(m.group("rack")), racks=True)


def _add(scan: Scan, m: re.Match[str], gpu: str, per_node: int, racks: bool = False) -> None:
    if resolve(gpu) != gpu:
        return
    written = " ".join(scan.text[m.start():m.end()].split())
    nodes = count(m.group("many")) if m.group("many") else None
    total = per_node * (nodes or 1)
    if racks:  # a rack's GPUs, unless a count is said ("an nvl72 slice, 4 gpus")
        scan.add("gpu", gpu, m.start(), m.end())
        scan.add("_rack_gpus", total, m.start(), m.end())
    else:
        scan.add("gpu", gpu, m.start(), m.end(), f"{written} = {total}x {gpu}")
        scan.add("gpu_count", total, m.start(), m.end())
    if nodes is not None and not racks:  # a rack is not a node: GB200's nodes are 4-GPU trays
        scan.add("nodes", nodes, m.start(), m.end())
    elif not racks:  # "on p5.48xlarge ... 4 nodes": an instance is one node's GPUs
        scan.add("gpus_per_node", per_node, m.start(), m.end())
    scan.add("_gpu_mention", {"gpu": gpu, "gpu_count": total, "nodes": nodes}, m.start(), m.end())


_CLOUD = re.compile(r"\b(?P<aws>aws|ec2|amazon)\b|\b(?P<gcp>gcp|google\s+cloud|gce)\b|\b(?P<azure>azure)\b")


def cloud_named(low: str) -> str | None:
    """The cloud a "which instance?" question is about ("on aws", "gcp", "azure"), or None."""
    m = _CLOUD.search(low)
    return None if m is None else next(k for k, v in m.groupdict().items() if v)
