"""The GPU catalog: typed records loaded once from ``service/data/gpus.json``.

Memory comes in two figures. ``memory_bytes_as_sold`` is the vendor's number ("80 GB"), which for
every GPU in the catalog is really GiB. ``memory_bytes_usable`` is the device total a CUDA/HIP
process sees (``torch.cuda.mem_get_info()[1]``); that is what decides whether something fits.
FLOP/s figures are dense (no 2:4 sparsity) with FP32 accumulate; ``peak_flops`` turns them into
FLOP/s for a precision and documents the fallbacks.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import asdict, dataclass
from functools import cache, lru_cache
from importlib.resources import files
from typing import Any, Literal

from service.core.errors import InvalidInput, UnknownName

Interconnect = Literal["nvlink", "pcie", "infinity-fabric"]
MarketingUnit = Literal["GB", "GiB"]

ID_PATTERN = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*-(\d+)gb$")


@dataclass(frozen=True, slots=True)
class Gpu:
    """One GPU model as people rent or buy it; bytes are exact integers."""

    id: str
    name: str
    vendor: str
    aliases: tuple[str, ...]
    default_for: tuple[str, ...]  # bare family names ("a100") that resolve to this variant
    memory_bytes_as_sold: int
    memory_marketing_unit: MarketingUnit
    memory_bytes_usable: int
    memory_note: str
    bf16_dense_tflops: float | None  # None: no BF16 tensor cores (V100, T4)
    fp16_dense_tflops: float
    fp8_dense_tflops: float | None
    fp32_tflops: float  # non-tensor FP32
    tf32_dense_tflops: float | None
    flops_note: str
    memory_bandwidth_gbps: float  # GB/s, decimal
    interconnect: Interconnect
    nvlink_domain: int  # GPUs sharing one NVLink / Infinity Fabric domain in the usual server
    gpus_per_node: int
    intra_node_bandwidth_gbps: float  # per GPU, bidirectional aggregate, GB/s
    topology_note: str
    default_mfu: float
    mfu_note: str
    price_per_gpu_hour_usd: float | None
    price_note: str
    release_year: int
    sources: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (tuples become lists) for ``GET /v1/gpus``."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}


# ---------------------------------------------------------------------------------------------
# Loading and validation


def _field(raw: dict[str, Any], key: str, kind: type | tuple[type, ...], gpu: str) -> Any:
    if key not in raw:
        raise ValueError(f"gpus.json: {gpu}: missing field {key!r}")
    value = raw[key]
    if isinstance(value, bool) or not isinstance(value, kind):
        raise ValueError(f"gpus.json: {gpu}: field {key!r} has type {type(value).__name__}")
    return value


def _num(raw: dict[str, Any], key: str, gpu: str) -> float:
    return float(_field(raw, key, (int, float), gpu))


def _opt_num(raw: dict[str, Any], key: str, gpu: str) -> float | None:
    if raw.get(key, 0) is None:
        return None
    return _num(raw, key, gpu)


def _strings(raw: dict[str, Any], key: str, gpu: str) -> tuple[str, ...]:
    items = _field(raw, key, list, gpu)
    if not all(isinstance(item, str) and item for item in items):
        raise ValueError(f"gpus.json: {gpu}: {key!r} must be a list of non-empty strings")
    return tuple(items)


def _parse(raw: dict[str, Any]) -> Gpu:
    gid = str(raw.get("id", "?"))
    unit = _field(raw, "memory_marketing_unit", str, gid)
    link = _field(raw, "interconnect", str, gid)
    if unit not in ("GB", "GiB"):
        raise ValueError(f"gpus.json: {gid}: memory_marketing_unit must be GB or GiB")
    if link not in ("nvlink", "pcie", "infinity-fabric"):
        raise ValueError(f"gpus.json: {gid}: unknown interconnect {link!r}")
    gpu = Gpu(
        id=_field(raw, "id", str, gid),
        name=_field(raw, "name", str, gid),
        vendor=_field(raw, "vendor", str, gid),
        aliases=_strings(raw, "aliases", gid),
        default_for=_strings(raw, "default_for", gid),
        memory_bytes_as_sold=_field(raw, "memory_bytes_as_sold", int, gid),
        memory_marketing_unit=unit,
        memory_bytes_usable=_field(raw, "memory_bytes_usable", int, gid),
        memory_note=_field(raw, "memory_note", str, gid),
        bf16_dense_tflops=_opt_num(raw, "bf16_dense_tflops", gid),
        fp16_dense_tflops=_num(raw, "fp16_dense_tflops", gid),
        fp8_dense_tflops=_opt_num(raw, "fp8_dense_tflops", gid),
        fp32_tflops=_num(raw, "fp32_tflops", gid),
        tf32_dense_tflops=_opt_num(raw, "tf32_dense_tflops", gid),
        flops_note=_field(raw, "flops_note", str, gid),
        memory_bandwidth_gbps=_num(raw, "memory_bandwidth_gbps", gid),
        interconnect=link,
        nvlink_domain=_field(raw, "nvlink_domain", int, gid),
        gpus_per_node=_field(raw, "gpus_per_node", int, gid),
        intra_node_bandwidth_gbps=_num(raw, "intra_node_bandwidth_gbps", gid),
        topology_note=_field(raw, "topology_note", str, gid),
        default_mfu=_num(raw, "default_mfu", gid),
        mfu_note=_field(raw, "mfu_note", str, gid),
        price_per_gpu_hour_usd=_opt_num(raw, "price_per_gpu_hour_usd", gid),
        price_note=_field(raw, "price_note", str, gid),
        release_year=_field(raw, "release_year", int, gid),
        sources=_strings(raw, "sources", gid),
    )
    if not ID_PATTERN.match(gpu.id):
        raise ValueError(f"gpus.json: id {gpu.id!r} is not <name>-<memory>gb")
    if not 0 < gpu.memory_bytes_usable <= gpu.memory_bytes_as_sold * 1.01:
        raise ValueError(f"gpus.json: {gid}: usable memory must be positive and <= as sold")
    if min(gpu.fp16_dense_tflops, gpu.fp32_tflops, gpu.memory_bandwidth_gbps) <= 0:
        raise ValueError(f"gpus.json: {gid}: peaks and bandwidth must be positive")
    if not 0 < gpu.default_mfu < 1 or gpu.nvlink_domain < 1 or gpu.gpus_per_node < 1:
        raise ValueError(f"gpus.json: {gid}: mfu, nvlink_domain or gpus_per_node out of range")
    return gpu


# ---------------------------------------------------------------------------------------------
# Name normalization: "NVIDIA A100-SXM4-40GB", "a100 40 gb", "A100_40G" all give one key.

_NOISE = {
    "nvidia",
    "amd",
    "intel",
    "geforce",
    "tesla",
    "quadro",
    "instinct",
    "gpu",
    "gpus",
    "card",
    "the",
    "generation",
    "edition",
    "hgx",
    "dgx",
    "oam",
}
_MEMORY_TYPE = re.compile(r"^(hbm\d*e?|gddr\d+x?)$")
_SIZE = re.compile(r"^(\d+)(gb|gib|g)$")
_PIECES = re.compile(r"[a-z]+|\d+")


def _tokens(text: str, numbers_as_gb: bool = False) -> list[str]:
    raw = re.split(r"[^a-z0-9]+", text.lower())
    raw = [t for t in raw if t and t not in _NOISE and not _MEMORY_TYPE.match(t)]
    out: list[str] = []
    for i, tok in enumerate(raw):
        size = _SIZE.match(tok)
        if size:
            out.append(size.group(1) + "gb")
        elif tok in ("gb", "gib", "g") and out and out[-1].isdigit():
            out[-1] += "gb"
        elif numbers_as_gb and i > 0 and tok.isdigit() and int(tok) <= 512:
            out.append(tok + "gb")  # "a100 80" -> 80gb
        else:
            out.extend(_PIECES.findall(tok))
    # "sxm4"/"sxm5" name the form factor; the generation digit adds nothing.
    return [t for i, t in enumerate(out) if not (t.isdigit() and i > 0 and out[i - 1] == "sxm")]


def _key(tokens: list[str]) -> str:
    return " ".join(sorted(tokens))


def _compact(text: str) -> str:
    """Lowercase letters and digits only, vendor words dropped: for fuzzy suggestions."""
    return "".join(_tokens(text))


@dataclass(frozen=True, slots=True)
class _Catalog:
    gpus: tuple[Gpu, ...]
    by_key: dict[str, Gpu]
    spellings: tuple[tuple[str, str], ...]  # (compact spelling, id) for suggestions


@cache
def _catalog() -> _Catalog:
    text = files("service.data").joinpath("gpus.json").read_text(encoding="utf-8")
    doc = json.loads(text)
    if not isinstance(doc, dict) or not isinstance(doc.get("gpus"), list):
        raise ValueError('gpus.json must be {"gpus": [...]}')
    gpus = tuple(_parse(item) for item in doc["gpus"] if isinstance(item, dict))
    if len(gpus) != len(doc["gpus"]):
        raise ValueError("gpus.json: every entry must be an object")
    by_key: dict[str, Gpu] = {}
    spellings: list[tuple[str, str]] = []
    for gpu in gpus:
        for spelling in (gpu.id, gpu.name, *gpu.aliases, *gpu.default_for):
            key = _key(_tokens(spelling))
            other = by_key.setdefault(key, gpu)
            if other.id != gpu.id:
                raise ValueError(f"gpus.json: {spelling!r} names both {other.id} and {gpu.id}")
            spellings.append((_compact(spelling), gpu.id))
    return _Catalog(gpus, by_key, tuple(spellings))


def all_gpus() -> list[Gpu]:
    """Every GPU in the catalog, in file order (loaded once, then cached)."""
    return list(_catalog().gpus)


def _drop(tokens: list[str], unwanted: set[str]) -> list[str]:
    return [t for t in tokens if t not in unwanted]


@lru_cache(maxsize=4096)  # names repeat: the planner and the service resolve them per request
@lru_cache(maxsize=1024)  # every request looks its GPU's name up more than once
def find_gpu(name: str) -> Gpu:
    """The GPU for an id, name, alias or a loose spelling of one.

    Case, spaces, ``-``/``_``, vendor words ("NVIDIA", "GeForce"), memory types ("HBM3") and word
    order are ignored; "40g"/"40 GiB" read as "40gb"; a plural ("h100s") and "SXM" are dropped
    when nothing matches with them. A bare family name ("a100") gives the variant whose
    ``default_for`` lists it. Raises ``UnknownName("gpu", name, up to 3 closest ids)``.
    """
    catalog = _catalog()
    for numbers_as_gb in (False, True):
        tokens = _tokens(name, numbers_as_gb)
        for unwanted in (set(), {"s"}, {"sxm"}, {"s", "sxm"}):
            gpu = catalog.by_key.get(_key(_drop(tokens, unwanted)))
            if gpu is not None and tokens:
                return gpu
    raise UnknownName("gpu", name, suggest_gpus(name))


def suggest_gpus(name: str, limit: int = 3) -> list[str]:
    """Up to ``limit`` catalog ids whose spellings are closest to ``name`` (difflib ratio)."""
    query = _compact(name)
    if not query:
        return []
    best: dict[str, float] = {}
    matcher = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2(query)
    for spelling, gid in _catalog().spellings:
        matcher.set_seq1(spelling)
        score = matcher.ratio()
        if score >= 0.5 and score > best.get(gid, 0.0):
            best[gid] = score
    return [gid for gid, _ in sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]]


# ---------------------------------------------------------------------------------------------
# Peak compute

Precision = Literal["bf16", "fp16", "fp8", "fp32", "tf32"]

_PRECISION_NAMES: dict[str, Precision] = {
    "bf16": "bf16",
    "bfloat16": "bf16",
    "fp16": "fp16",
    "float16": "fp16",
    "half": "fp16",
    "fp8": "fp8",
    "float8": "fp8",
    "e4m3": "fp8",
    "e5m2": "fp8",
    "fp32": "fp32",
    "float32": "fp32",
    "float": "fp32",
    "tf32": "tf32",
    "tensorfloat32": "tf32",
}


def normalize_precision(precision: str) -> Precision:
    """``"BF16"``, ``"bfloat16"``, ``"float8"`` ... to one of bf16/fp16/fp8/fp32/tf32."""
    found = _PRECISION_NAMES.get(re.sub(r"[^a-z0-9]", "", precision.lower()))
    if found is None:
        raise InvalidInput("precision", f"unknown precision {precision!r}", "bf16, fp16, fp8, fp32, tf32")
    return found


def peak_tflops(gpu: Gpu, precision: str) -> float:
    """Dense peak in TFLOP/s for matmuls at ``precision``, with these fallbacks.

    - bf16 on a GPU without BF16 tensor cores (V100, T4) uses the FP16 figure: such jobs run
      in fp16 mixed precision there.
    - fp8 without FP8 tensor cores (A100, V100, ...) uses the bf16 figure (after its own
      fallback): fp8 storage brings no matmul speed-up on those GPUs.
    - tf32 without TF32 tensor cores (V100, T4, MI250X) uses the plain FP32 figure.
    """
    match normalize_precision(precision):
        case "fp32":
            return gpu.fp32_tflops
        case "tf32":
            return gpu.tf32_dense_tflops or gpu.fp32_tflops
        case "fp16":
            return gpu.fp16_dense_tflops
        case "bf16":
            return gpu.bf16_dense_tflops or gpu.fp16_dense_tflops
        case "fp8":
            return gpu.fp8_dense_tflops or peak_tflops(gpu, "bf16")


def peak_flops(gpu: Gpu, precision: str) -> float:
    """Dense peak in FLOP/s (``peak_tflops`` x 1e12); see ``peak_tflops`` for the fallbacks."""
    return peak_tflops(gpu, precision) * 1e12
