"""Which training stack runs a layout when the request names none: Megatron-LM for tensor,
pipeline or context parallelism with at most ZeRO-1 (its distributed optimizer), FSDP2
(torchtitan) for those with sharded states, DeepSpeed for data parallelism alone; selective
recompute is Megatron-LM's, or torchtitan's for the models torchtitan ships. The resolved job
(its as-stated figures) and the planner (``planning/stacks.py``) use this one rule."""

from __future__ import annotations

import json
from functools import cache
from importlib.resources import files


@cache
def torchtitan_models() -> dict[str, tuple[str, str]]:
    """Preset id -> (torchtitan model name, flavor) for the models torchtitan ships."""
    raw = json.loads(files("service.data").joinpath("torchtitan_models.json")
                     .read_text(encoding="utf-8"))
    return {key: (value[0], value[1]) for key, value in raw["models"].items()}


def layout_stack_id(tp: int, pp: int, cp: int, zero_stage: int, recompute: str,
                    torchtitan_ships: bool) -> str:
    """The stack id for a layout: "megatron", "fsdp" or "deepspeed"."""
    model_parallel = tp * pp * cp > 1
    selective = recompute == "selective"
    if zero_stage >= 2 and (model_parallel or selective):
        return "fsdp" if not selective or torchtitan_ships else "megatron"
    if model_parallel or selective:
        return "megatron"
    return "deepspeed"
