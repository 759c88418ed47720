"""The search's tables of layout shapes, kept per search space for the next question.

What the search works out about shapes reads the search space (the model's layers, heads and
experts, the node and NVLink sizes, the stated knobs, the global batch, the CP sizes) but never
the sequence length: a structure's leanest layout is the most ZeRO and recompute and micro-batch
1 or the stated one, and the CP sizes that the length allows are in the space already. So a new
question about a model asked about before (most ask again with another length) reuses them,
as it reuses the model-state tables (``layout_totals.py``); the knob settings ranked fastest
first read the length (step time) and stay with one question (``Searcher.ranked``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import Any

from service.core.planning.layouts import SearchSpace, Structure
from service.core.planning.plan_types import Layout
from service.core.recent import Recent

SPACES = 24  # recent search spaces a process keeps tables of (a fits-on table uses ~8, fixes more)


@dataclass(slots=True)
class ShapeProbes:
    """The leanest layout of each probed (dp, tp, cp, pp, ep), the data-parallel sizes that make
    whole nodes by replica and expert-parallel size, each GPU count's structures with their
    leanest layouts, and the space's model shapes in search order. GPU types with the same node
    size and NVLink domain share them."""

    layouts: dict[tuple[int, int, int, int, int], Layout | None] = field(default_factory=dict)
    whole_nodes: dict[tuple[int, int], list[int]] = field(default_factory=dict)
    counts: dict[int, list[tuple[Structure, Layout]]] = field(default_factory=dict)  # leanest
    shapes: list[tuple[int, int, int]] | None = None  # ``model_shapes``, fewest GPUs first


_kept: Recent[Any, ShapeProbes] = Recent(SPACES)
_but_length = attrgetter(*(f.name for f in fields(SearchSpace) if f.name != "seq_len"))


def shape_probes(space: SearchSpace) -> ShapeProbes:
    """The space's tables (shared by every length), the SPACES most recent kept."""
    key = _but_length(space)
    found = _kept.get(key)
    return found if found is not None else _kept.put(key, ShapeProbes())


def forget_shapes() -> None:
    _kept.clear()
