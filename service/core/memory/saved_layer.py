"""Everything one transformer layer keeps for backward: its attention half, its MLP half, and
the LoRA adapters' inputs when only adapters train."""

from __future__ import annotations

from functools import lru_cache

from service.core.memory.saved_adapters import adapter_saved
from service.core.memory.saved_attention import attention_saved
from service.core.memory.saved_tensors import LayerSetup, Saved, ffn_saved
from service.core.model.architecture import Architecture


@lru_cache(maxsize=1024)
def layer_saved(arch: Architecture, s: LayerSetup, moe_layer: bool) -> tuple[Saved, ...]:
    """Everything one layer keeps for backward (no recompute), bytes per token."""
    items = attention_saved(arch, s) + ffn_saved(arch, s, moe_layer)
    if s.adapters:
        items += adapter_saved(arch, s, moe_layer)
    return tuple(items)
