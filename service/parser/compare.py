"""Comparisons: "A100 80GB vs H100", "zero-2 or zero-3?", "lora vs qlora", "4k or 8k context".

With a comparison word, the first knob written with two or more different values is compared;
each value becomes a variant of the same request. GPU variants keep their own counts ("8x A100
vs 8x H100"); a GPU without a count borrows the other's.
"""

from __future__ import annotations

import re
from typing import Any

from service.core.hardware.gpus import find_gpu
from service.parser.followup import same_family
from service.parser.types import Finding, Variant

COMPARABLE = ("model", "gpu", "zero_stage", "finetune_method", "framework", "quantization",
              "kv_cache_dtype", "precision", "optimizer", "recompute", "seq_len", "gpu_count",
              "lora_rank", "tp", "pp", "cp", "micro_batch", "offload", "flash_attn", "concurrent",
              "nodes", "lora_targets")
_SHARED_NOUN = re.compile(
    r"(?<![\w.\-])([\w.\-]{1,24})\s+(vs\.?|versus|or)\s+([\w.\-]{1,24})\s+(kv[\s\-_]*cache|kv|recompute|recomputation|"
    r"checkpointing|context(?:\s+length)?|ctx|seq(?:uence)?(?:\s+len(?:gth)?)?|weights|training|"
    r"precision|offload)\b", re.I)


# "is 2x A6000 enough or do I need 4?": two counts of one GPU
_OR_NEED = r"or\s+(?:do|would|will|should)\s+(?:i|we|you)\s+need\s+(\d{1,4})(?:\s*x)?\b"
_ENOUGH_OR_MORE = re.compile(
    r"\b(\d{1,4})\s*x?\s*([a-z][\w\-]{1,20}?(?:\s+\d{2,3}\s*gb)?)(s?)\s+(?:(?:is|are|be)\s+)?enough\s*,?\s*"
    + _OR_NEED + r"(?!\s*(?:gb|k|b|bits?)\b)", re.I)
# "on h100s, is 4 enough or do I need 8?": the same with the GPU named before
_COUNT_ENOUGH_OR_MORE = re.compile(r"\b(?:is|are|would)\s+(\d{1,4})\s*x?\s+(?:be\s+)?enough\s*,?\s*"
                                   + _OR_NEED + r"(?!\s*(?:gb|k|b|bits?|nodes?)\b)", re.I)


# "A100 40GB vs 80GB": the second memory is the same GPU's other variant
_SAME_GPU_OTHER_MEMORY = re.compile(
    r"\b([a-z]{1,4}[\s\-]?\d{2,4}[a-z]{0,3})\s*(\d{2,3})\s*(gb|gib|g)\s+(vs\.?|versus|or)\s+"
    r"(\d{2,3})\s*(?:gb|gib|g)\b(?!\s*(?:of\s+)?(?:ram|vram|memory))", re.I)


# "is the H200 worth it over H100", "is 8x4090 faster than 2x A100" (a GPU after "than", not "2
# weeks"): two sides of a comparison
_GPU_AHEAD = (r"(?=(?:the\s+|an?\s+|\d{1,4}\s*x?\s*)?(?:nvidia\s+|rtx\s*)?[a-z]{0,4}[\s\-]?\d{2,4}"
              r"(?![\d.]*\s*(?:days?|hours?|weeks?|months?|tok\w*|[kmbt]\b)))")
_SECOND_SIDE = re.compile(r"\bworth\s+(?:it\s+|the\s+(?:money|price|cost|upgrade)\s+)?over\s+|\b(?:faster|"
                          r"better|cheaper|slower|quicker|worse)\s+than\s+" + _GPU_AHEAD, re.I)

# "3x faster", "2x more memory": a ratio, not a GPU count
_RATIO = re.compile(r"\b(\d{1,3}(?:\.\d+)?)\s*x\s+(?=(?:faster|slower|cheaper|quicker|better|worse|more|less|"
                    r"bigger|larger|smaller|higher|lower|as\s+(?:fast|much|many|expensive))\b)", re.I)


def expand(text: str) -> str:
    """"fp8 vs bf16 kv cache" -> "fp8 kv cache vs bf16 kv cache" (each side names its noun);
    "2x A6000 enough or do I need 4" -> "2x A6000 or 4x A6000"; "is 4 enough or do I need 8" ->
    "4 gpus or 8 gpus"."""
    text = _SECOND_SIDE.sub("vs ", _RATIO.sub(r"\1 times ", text))
    text = _ENOUGH_OR_MORE.sub(lambda m: f"{m[1]}x {m[2]} or {m[4]}x {m[2]}", text)
    text = _COUNT_ENOUGH_OR_MORE.sub(lambda m: f"{m[1]} gpus or {m[2]} gpus", text)
    text = _SAME_GPU_OTHER_MEMORY.sub(lambda m: f"{m[1]} {m[2]}{m[3]} {m[4]} {m[1]} {m[5]}{m[3]}",
                                      text)
    return _SHARED_NOUN.sub(lambda m: f"{m[1]} {m[4]} {m[2]} {m[3]} {m[4]}", text)
_METHOD = {"full": "full fine-tuning", "lora": "LoRA", "qlora": "QLoRA"}


def label(field: str, value: Any, extra: dict[str, Any] | None = None) -> str:
    """A short label for one side: 'A100 80GB', 'ZeRO-2', 'QLoRA', 'seq 8192'."""
    if field == "gpu":
        name = find_gpu(str(value)).name.replace("NVIDIA ", "").replace("GeForce ", "")
        count = (extra or {}).get("gpu_count")
        return f"{count}x {name}" if count else name
    if field == "zero_stage":
        return f"ZeRO-{value}"
    if field in ("tp", "pp", "cp", "ep"):
        return f"{field.upper()}={value}"
    if field == "finetune_method":
        return _METHOD.get(str(value), str(value))
    if field in ("model", "quantization", "precision", "optimizer"):
        return str(value)
    if field == "params_b":
        return f"{value:g}B"
    if field == "lora_targets":
        return "LoRA on attention" if value == "attention" else "LoRA on all linear layers"
    if field == "kv_cache_dtype":
        return f"{value} KV cache"
    if field == "flash_attn":
        return "FlashAttention " + ("on" if value else "off")
    return f"{field.replace('_', ' ')} {value}"


def variants(findings: list[Finding],
             ordered: dict[str, list[Any]]) -> tuple[str | None, tuple[Variant, ...]]:
    """The compared field and its variants, or (None, ()) when no knob has two values."""
    models = [f for f in findings if f.field == "model"
              or (f.field == "params_b" and f.value in ordered.get("params_b", ()))]
    candidates: list[tuple[int, str]] = []
    if len({(f.field, f.value) for f in models}) >= 2:
        candidates.append((min(f.start for f in models), "model"))
    for field in COMPARABLE[1:]:
        if len(ordered.get(field, [])) >= 2:
            starts = [f.start for f in findings if f.field == field]
            candidates.append((min(starts) if starts else 0, field))
    if not candidates:
        return None, ()
    field = min(candidates, key=lambda c: (COMPARABLE.index(c[1]), c[0]))[1]
    if field == "model":
        out: list[Variant] = []
        named = next((f.value for f in sorted(models, key=lambda f: f.start) if f.field == "model"),
                     None)
        for f in sorted(models, key=lambda f: f.start):
            changes = {"model": f.value} if f.field == "model" else {"params_b": f.value}
            sibling = same_family(named, f.value) if f.field == "params_b" else None
            if sibling is not None:  # "qwen 2.5 1.5b vs 0.5b": the second is a qwen2.5 too
                changes = {"model": sibling}
            if all(v.changes != changes for v in out):
                out.append(Variant(label(*next(iter(changes.items()))), changes))
        return "model", tuple(out)
    if field == "gpu":
        return "gpu", _gpu_variants(findings)
    written: dict[Any, int] = {}  # where each value is first written (bare dtypes, engines)
    for f in sorted(findings, key=lambda f: f.start):
        if f.field in (field, "_dtype", "_serving_framework") and f.value in ordered[field]:
            written.setdefault(f.value, f.start)
    values = sorted(ordered[field], key=lambda v: written.get(v, 0))
    return field, tuple(Variant(label(field, v), _changes(field, v)) for v in values)


# A follow-up that compares with the thread: "vs mi300x?", "or zero-2?", "how does it compare
# on b200" (a bare "or" only when it opens the message: "8 gpus or so" compares nothing)
_VERSUS_THREAD = re.compile(r"^\W*(?:or|vs\.?|versus)\b|\bvs\.?(?!\w)|\bversus\b|\bcompar\w*|\bbetter\b"
                            r"|\bstacks?\s+up\b|\bagainst\s+(?:that|this|it|those|these)\b")


def against_previous(text: str, ordered: dict[str, list[Any]],
                     previous: dict[str, Any]) -> tuple[str | None, tuple[Variant, ...]]:
    """The thread's value against the one this message names, when it asks for a comparison
    and names one value of a field the previous request set otherwise."""
    if not previous or not _VERSUS_THREAD.search(text):
        return None, ()
    for field in COMPARABLE:
        values = ordered.get(field, [])
        if len(values) == 1 and field in previous and previous[field] != values[0]:
            old, new = previous[field], values[0]
            return field, (Variant(label(field, old, previous), _changes(field, old)),
                           Variant(label(field, new, previous), _changes(field, new)))
    return None, ()


def _changes(field: str, value: Any) -> dict[str, Any]:
    if field == "finetune_method" and value == "qlora":
        return {field: value, "quantization": "nf4"}
    return {field: value}


def _gpu_variants(findings: list[Finding]) -> tuple[Variant, ...]:
    mentions = [dict(f.value) for f in findings if f.field == "_gpu_mention" and isinstance(f.value, dict)]
    counts = [m["gpu_count"] for m in mentions if m.get("gpu_count")]
    out: list[Variant] = []
    for m in mentions:
        changes: dict[str, Any] = {"gpu": m["gpu"]}
        if m.get("gpu_count") or counts:
            changes["gpu_count"] = m.get("gpu_count") or counts[0]
        if m.get("nodes"):
            changes["nodes"] = m["nodes"]
        if all(v.changes != changes for v in out):
            out.append(Variant(label("gpu", m["gpu"], changes), changes))
    return tuple(out)
