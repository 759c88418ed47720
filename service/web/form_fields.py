"""The home form's fields: what each asks, in which group, its accepted values with human labels
(from the request's choices), its default in words, and its numeric bounds (the API's size
limits), so the browser and the service agree on what is accepted."""

from __future__ import annotations

from dataclasses import dataclass

from service.schemas.fields import CHOICES
from service.schemas.size_limits import float_range, int_range
from service.web.labels import choice_label


@dataclass(frozen=True, slots=True)
class FormField:
    name: str
    label: str
    kind: str  # text | number | select
    hint: str = ""  # the placeholder, or the blank option's words: what an empty field means
    options: tuple[tuple[str, str], ...] = ()  # (value, label) for a select
    datalist: str = ""  # the id of a <datalist> of suggestions (models, GPUs)
    required: bool = False

    def bounds(self) -> tuple[str, str, str] | None:
        """(min, max, step) of a number field."""
        ints = int_range(self.name)
        if ints is not None:
            return str(ints[0]), str(ints[1]), "1"
        floats = float_range(self.name)
        if floats is not None:
            return f"{floats[0]:g}", f"{floats[1]:g}", "any"
        return None


def _choices(name: str) -> tuple[tuple[str, str], ...]:
    return tuple((value, choice_label(name, value)) for value in CHOICES[name])


def _select(name: str, label: str, default: str) -> FormField:
    return FormField(name, label, "select", default, _choices(name))


GROUPS: tuple[tuple[str, tuple[FormField, ...]], ...] = (
    ("The job", (
        FormField("model", "model", "text", "llama-3-8b, Llama 3 8B or 7B", datalist="models",
                  required=True),
        _select("task", "task", "default: training"),
        _select("finetune_method", "fine-tuning method", "default: full (LoRA with a rank)"),
        FormField("lora_rank", "LoRA rank", "number", "16 with LoRA"),
    )),
    ("Precision", (
        _select("precision", "precision", "default: bf16 mixed"),
        _select("quantization", "weights quantization (serving, QLoRA)", "default: 16-bit"),
        _select("kv_cache_dtype", "KV cache dtype (serving)", "default: 16-bit"),
    )),
    ("Sizes", (
        FormField("seq_len", "context / sequence length (tokens)", "number", "4096"),
        FormField("concurrent", "concurrent sequences (serving)", "number", "1"),
        FormField("micro_batch", "micro-batch (training)", "number", "1"),
        FormField("global_batch", "global batch (training)", "number", "no accumulation"),
    )),
    ("Training layout", (
        FormField("zero_stage", "ZeRO stage", "select", "default: the planner's",
                  tuple((str(i), f"ZeRO-{i}" if i else "0 (plain data parallel)")
                        for i in range(4))),
        _select("recompute", "activation recompute", "default: the planner's"),
        FormField("tokens", "training tokens (time and cost)", "number", "e.g. 1e12"),
    )),
    ("GPUs", (
        FormField("gpu", "GPU", "text", "a100-40gb, H100 or 4090", datalist="gpus"),
        FormField("gpu_count", "GPU count", "number", "the fewest that fit"),
    )),
)

FIELDS: dict[str, FormField] = {f.name: f for _, group in GROUPS for f in group}


def field_label(name: str) -> str:
    found = FIELDS.get(name)
    return found.label if found is not None else name.replace("_", " ")
