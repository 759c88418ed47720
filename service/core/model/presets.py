"""Built-in model presets: real published configurations, read from ``service/data/models/*.json``.

Each preset holds the model's ``config.json`` values as an :class:`Architecture`, the parameter
count its authors published (``published_params``) and where that figure comes from, and its
checkpoint's native ``weight_format`` (``bf16`` unless stated: ``fp8-block`` for DeepSeek-V3 and
Kimi K2, ``mxfp4`` for gpt-oss), which serving uses unless another format is asked for. Names are
matched the way people write them: the id, any alias, the Hugging Face repo id, with spacing, case
and punctuation ignored and training/packaging suffixes (``-Instruct``, ``-chat``, ``-it``,
``-hf``, ``-4k``, release dates like ``-2407``) dropped.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources
from typing import Any

from service.core.errors import InvalidInput, UnknownName
from service.core.model.architecture import Architecture
from service.core.model.formats import QUANT_BITS

DATA_PACKAGE = "service.data"
MODELS_DIR = "models"

# Words that name a fine-tune, a file format or a packaging of the same weights (Hugging Face
# repo naming: Llama-2-7b-chat-hf, gemma-2-9b-it, Mistral-7B-Instruct-v0.3, Qwen2.5-7B-Instruct-AWQ).
_SUFFIXES = frozenset(
    {
        "instruct", "chat", "it", "base", "hf", "pt", "sft", "dpo", "rlhf", "deduped",
        "awq", "gptq", "gguf", "mlx", "fp8", "fp16", "bf16", "int4", "int8", "4bit", "8bit",
        "bnb", "unsloth",  # unsloth's pre-quantized uploads: "Llama-3.2-3B-Instruct-unsloth-bnb-4bit"
    }
)  # fmt: skip
_CONTEXT_SUFFIX = re.compile(r"\d+k")  # Phi-3-mini-4k / -128k: context length, same weights
_DATE_SUFFIX = re.compile(r"\d{4}")  # Mistral-Nemo-2407, DeepSeek-R1-0528: release date
_LEADING = frozenset({"meta"})  # "Meta Llama 3 8B", "Meta-Llama-3.1-8B-Instruct"
_MAX_SUGGESTIONS = 3


@dataclass(frozen=True, slots=True)
class ModelPreset:
    """One real model: its published configuration and published parameter count."""

    id: str
    name: str
    hf_repo: str | None
    aliases: tuple[str, ...]
    published_params: int
    published_active_params: int | None  # MoE models: parameters used per token, as published
    params_source: str  # where published_params comes from, and any quirk behind it
    arch: Architecture
    family: str = ""  # the data file it came from: "llama", "qwen", ...
    weight_format: str = "bf16"  # the checkpoint's native weight format (formats.QUANT_BITS)
    # the repo's config.json names its own modelling code (``auto_map``) for a model type
    # transformers does not ship: vLLM and SGLang load it only with --trust-remote-code
    remote_code: bool = False
    # the context the model was trained for: its config.json max_position_embeddings (Mistral
    # Nemo's documented 128k, its config says 1,024,000); None: not recorded
    max_context: int | None = None
    same_as: str | None = None  # the preset whose architecture this published checkpoint has

    @property
    def names(self) -> tuple[str, ...]:
        """Every name this preset answers to: id, display name, aliases, HF repo; repo ids also
        without their ``org/`` part."""
        names = [self.id, self.name, *self.aliases]
        if self.hf_repo:
            names.append(self.hf_repo)
        names += [name.rsplit("/", 1)[-1] for name in names if "/" in name]
        return tuple(names)


def name_key(text: str) -> str:
    """Case-, spacing- and punctuation-free form of a model name.

    Only letters, digits and dots between digits survive: "LLaMA-3 8b" and "llama3-8b" both give
    "llama38b", while "Qwen2.5-7B" ("qwen2.57b") stays apart from "Qwen2-57B" ("qwen257b"). A
    "+" is "plus" ("Command R+", "command-r-plus").
    """
    kept = re.sub(r"[^0-9a-z.]", "", text.lower().replace("+", "plus"))
    return re.sub(r"(?<!\d)\.|\.(?!\d)", "", kept)


def strip_suffixes(text: str) -> str:
    """Drop fine-tune/format words, trailing context lengths and dates, and a leading "meta"."""
    tokens = [t for t in re.split(r"[^0-9a-z.]+", text.lower()) if t]
    # Fine-tune words may sit before a version ("Mistral-7B-Instruct-v0.3"): drop them anywhere
    # after the first word; context lengths and dates only at the end.
    tokens = tokens[:1] + [t for t in tokens[1:] if t not in _SUFFIXES]
    while len(tokens) > 1 and (
        _CONTEXT_SUFFIX.fullmatch(tokens[-1]) or _DATE_SUFFIX.fullmatch(tokens[-1])
    ):
        tokens.pop()
    if len(tokens) > 1 and tokens[0] in _LEADING:
        tokens.pop(0)
    return " ".join(tokens)


def _require(data: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    value = data.get(key)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise ValueError(f"{where}: field {key!r} is missing or not {kind}")
    return value


def _preset(data: Any, family: str, where: str) -> ModelPreset:
    if not isinstance(data, dict):
        raise ValueError(f"{where}: each model must be an object")
    preset_id = _require(data, "id", str, where)
    where = f"{where} ({preset_id})"
    hf_repo = data.get("hf_repo")
    if hf_repo is not None and not isinstance(hf_repo, str):
        raise ValueError(f"{where}: hf_repo must be a string or null")
    aliases = _require(data, "aliases", list, where)
    if not all(isinstance(a, str) for a in aliases):
        raise ValueError(f"{where}: aliases must be strings")
    active = data.get("published_active_params")
    if active is not None and (isinstance(active, bool) or not isinstance(active, int)):
        raise ValueError(f"{where}: published_active_params must be an integer or null")
    arch_data = dict(_require(data, "arch", dict, where))
    arch_data.setdefault("name", preset_id)
    try:
        arch = Architecture.from_dict(arch_data)
    except InvalidInput as exc:
        raise ValueError(f"{where}: {exc}") from exc
    return ModelPreset(
        id=preset_id,
        name=_require(data, "name", str, where),
        hf_repo=hf_repo,
        aliases=tuple(aliases),
        published_params=_require(data, "published_params", int, where),
        published_active_params=active,
        params_source=_require(data, "params_source", str, where),
        arch=arch,
        family=family,
        weight_format=_weight_format(data, where),
        remote_code=bool(data.get("remote_code", False)),
        max_context=data.get("max_context"),
        same_as=data.get("same_as"),
    )


def _weight_format(data: dict[str, Any], where: str) -> str:
    fmt = data.get("weight_format", "bf16")
    if not isinstance(fmt, str) or fmt not in QUANT_BITS:
        raise ValueError(f"{where}: weight_format must be one of {', '.join(QUANT_BITS)}")
    return fmt


@cache
def _load() -> tuple[ModelPreset, ...]:
    """Read every ``models/*.json`` in the package data, in file-name order."""
    folder = resources.files(DATA_PACKAGE).joinpath(MODELS_DIR)
    presets: list[ModelPreset] = []
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".json"):
            continue
        family = entry.name.removesuffix(".json")
        document = json.loads(entry.read_text(encoding="utf-8"))
        models = document.get("models") if isinstance(document, dict) else None
        if not isinstance(models, list):
            raise ValueError(f"models/{entry.name}: expected {{\"models\": [...]}}")
        entries = {item.get("id"): item for item in models if isinstance(item, dict)}
        for number, item in enumerate(models):
            presets.append(_preset(_with_base(item, entries), family,
                                   f"models/{entry.name}[{number}]"))
    return tuple(presets)


# what a published checkpoint of another preset's architecture ("same_as": DeepSeek-R1 is
# DeepSeek-V3's) takes from it unless it says otherwise: its own id, name, repo and aliases
_SHARED = ("published_params", "published_active_params", "params_source", "max_context",
           "weight_format", "remote_code", "arch")


def _with_base(item: Any, entries: dict[Any, Any]) -> Any:
    if not isinstance(item, dict) or "same_as" not in item:
        return item
    base = entries.get(item["same_as"])
    if not isinstance(base, dict) or "same_as" in base:
        raise ValueError(f"{item.get('id')}: same_as {item['same_as']!r} is not a preset of its "
                         "file with its own architecture")
    return {**{key: base[key] for key in _SHARED if key in base}, **item}


def all_presets() -> list[ModelPreset]:
    """Every built-in preset (a fresh list; the presets themselves are immutable)."""
    return list(_load())


@cache
def _index() -> dict[str, ModelPreset]:
    """name_key of every name of every preset -> preset; two presets may not share a key."""
    index: dict[str, ModelPreset] = {}
    for preset in _load():
        for name in preset.names:
            key = name_key(name)
            other = index.setdefault(key, preset)
            if other.id != preset.id:
                raise ValueError(f"model name {name!r} of {preset.id} also names {other.id}")
    return index


def _candidates(name: str) -> list[str]:
    """The text as given, without an ``org/`` prefix, and both without fine-tune/format words."""
    forms = [name]
    if "/" in name:
        forms.append(name.rsplit("/", 1)[-1])
    return forms + [strip_suffixes(form) for form in forms]


@lru_cache(maxsize=4096)  # every request looks its model's name up two or three times
def lookup_preset(name: str) -> ModelPreset | None:
    """The preset a name stands for, or None."""
    index = _index()
    for form in _candidates(name.strip()):
        preset = index.get(name_key(form))
        if preset is not None:
            return preset
    return None


def suggestions(name: str, limit: int = _MAX_SUGGESTIONS) -> list[str]:
    """Ids of the presets whose names are closest to ``name`` (difflib ratio), best first."""
    index = _index()
    key = name_key(strip_suffixes(name)) or name_key(name)
    ids: list[str] = []
    for match in difflib.get_close_matches(key, list(index), n=4 * limit, cutoff=0.5):
        preset_id = index[match].id
        if preset_id not in ids:
            ids.append(preset_id)
    return ids[:limit]


@lru_cache(maxsize=4096)  # names repeat: the planner and the service resolve them per request
def find_preset(name: str) -> ModelPreset:
    """The preset for a model name; UnknownName with up to 3 closest ids when none matches."""
    preset = lookup_preset(name) if isinstance(name, str) else None
    if preset is None:
        raise UnknownName("model", str(name), suggestions(name) if isinstance(name, str) else [])
    return preset
