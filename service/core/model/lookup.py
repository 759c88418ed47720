"""Which architecture a request means: a preset, a bare size, or an architecture given inline."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from service.core.errors import InvalidInput, UnknownName
from service.core.model.architecture import Architecture
from service.core.model.bare_sizes import bare_size_label, parse_size, resolve_bare_size
from service.core.model.caveats import Caveat, architecture_caveats, checkpoint_note
from service.core.model.hf_config import architecture_from_hf_config, looks_like_hf_config
from service.core.model.params import check_total_size, parameter_count
from service.core.model.presets import ModelPreset, find_preset

BARE_SIZE = re.compile(r"^\s*\d+(\.\d+)?\s*[mMbBtT]\s*$")


@dataclass(frozen=True, slots=True)
class ResolvedModel:
    arch: Architecture
    model_id: str
    description: str  # one line: what this model is, as the user should read it
    stated_params: int = 0  # a bare size's stated parameter count (0: use the architecture's)
    weight_format: str = "bf16"  # the checkpoint's native weight format (model/formats.py)
    label: str = ""  # a few words for a chat line: "Llama 3 8B", "7B = Llama 2 7B shape"
    # How the checkpoint's native format is used, and what is not modelled exactly for this
    # model (model/caveats.py); both also appended to ``description``, which every answer carries.
    checkpoint: str = ""
    caveats: tuple[Caveat, ...] = ()

    @property
    def param_scale(self) -> float:
        """Model states follow a stated size ("7B" = 7.00e9) over the standard shape's count."""
        if not self.stated_params:
            return 1.0
        return self.stated_params / parameter_count(self.arch)


def resolve_model(
    model: str | None, params_b: float | None, arch: dict[str, Any] | None
) -> ResolvedModel:
    """arch wins over model, model over params_b; params_b given beside a model or an
    architecture restates its parameter count for model states (the shape stays)."""
    if arch is not None:
        return _restated(_inline(arch), params_b)
    if model is not None:
        try:
            preset = find_preset(model)
        except UnknownName:
            if BARE_SIZE.match(model):
                return _bare(model)
            raise
        return _restated(_preset_model(preset), params_b)
    if params_b is not None:
        return _bare(params_b * 1e9)
    raise InvalidInput(
        "model",
        "no model given",
        "a model id or alias (llama-3-8b), a size (params_b: 7 or model: '7B'), or arch",
    )


@lru_cache(maxsize=1024)  # one per preset, asked for on every request about it
def _preset_model(preset: ModelPreset) -> ResolvedModel:
    found = ResolvedModel(preset.arch, preset.id, f"{preset.name} ({preset.hf_repo})",
                          weight_format=preset.weight_format, label=preset.name)
    return _with_caveats(found, checkpoint_note(preset.weight_format))


def _with_caveats(found: ResolvedModel, checkpoint: str = "") -> ResolvedModel:
    caveats = architecture_caveats(found.arch)
    description = found.description + (f"; {checkpoint}" if checkpoint else "")
    if caveats:
        description += f"; not modelled exactly: {'; '.join(map(str, caveats))}"
    return replace(found, checkpoint=checkpoint, caveats=caveats, description=description)


def _restated(found: ResolvedModel, params_b: float | None) -> ResolvedModel:
    if params_b is None:
        return found
    return replace(found, stated_params=round(params_b * 1e9),
                   description=f"{found.description}, restated as {params_b:g}B")


def _inline(data: dict[str, Any]) -> ResolvedModel:
    if not isinstance(data, dict):
        raise InvalidInput("arch", "must be an object", "architecture fields or an HF config.json")
    if looks_like_hf_config(data):
        arch = architecture_from_hf_config(data)
        check_total_size(arch)
        return _with_caveats(ResolvedModel(arch, _slug(arch.name),
                                           f"{arch.name} (from a config.json)", label=arch.name))
    arch = Architecture.from_dict(data)
    check_total_size(arch)
    return _with_caveats(ResolvedModel(arch, _slug(arch.name), f"{arch.name} (custom architecture)",
                                       label=arch.name))


def _bare(size: str | float) -> ResolvedModel:
    arch, description = resolve_bare_size(size)
    stated = round(parse_size(size))
    return ResolvedModel(arch, f"{stated / 1e9:g}b", description, stated_params=stated,
                         label=bare_size_label(size))


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9.]+", "-", name.lower()).strip("-") or "custom"
