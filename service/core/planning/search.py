"""The search: the fewest GPUs of one type that fit a training job, and the fastest layout there.

For each GPU count (powers of two inside one node, then whole nodes), every model-parallel
structure (tp, pp, cp, ep; dp the rest) is tried: first with its leanest knobs (most ZeRO,
most recompute, smallest micro-batch); if even that does not fit, the structure is out.
Otherwise its knob settings are tried fastest first (``step_time.py``) and the first that
fits is the structure's best. The count's answer is the fastest structure-best; ties go to
the one with more memory to spare. The search starts at a lower bound (all model states spread
perfectly over the GPUs) and stops at the first count that fits, trying LINEAR_NODE_STEPS
node counts one by one; past those (models far too big for the GPU), every model shape (tp, cp, pp) gets its
smallest fitting data-parallel size by bisection, and the fewest GPUs over all shapes wins.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from service.core.memory.error_band import band_for
from service.core.planning.layout_memory import MemoryModel
from service.core.planning.layouts import (
    SearchSpace,
    Structure,
    counts_ok,
    divisors,
    dp_ok,
    dp_sizes,
    knob_layouts,
    leanest,
    model_shapes,
    structures,
)
from service.core.planning.plan_types import Candidate, Layout
from service.core.planning.shape_tables import ShapeProbes
from service.core.planning.step_time import relative_step_time, step_terms

MAX_GPUS = 1 << 17  # 131,072 GPUs: beyond any cluster that exists
NEAR_TIE = 0.03  # step times this close are a tie when one layout's band crosses the card
LINEAR_NODE_STEPS = 4


@dataclass(slots=True)
class CountResult:
    """What one GPU count gave: the best fitting candidate, the others, the leanest miss."""

    gpus: int
    best: Candidate | None = None
    fitting: list[Candidate] = field(default_factory=list)  # best per structure
    leanest: Candidate | None = None  # lowest per-GPU total of all structures, when none fits


@dataclass(slots=True)
class Searcher:
    """Evaluates counts for one request on one GPU type."""

    space: SearchSpace
    memory: MemoryModel
    budget: int
    virtual_stages: int = 1
    leanest_wanted: bool = True  # False: CountResult.leanest is left out (fits-on rows)
    probes: ShapeProbes = field(default_factory=ShapeProbes)  # the space's (shape_tables.py)
    ranked: dict[Structure, list[Layout]] = field(default_factory=dict)  # knobs, fastest first
    _counts: dict[int, CountResult] = field(default_factory=dict)

    def candidate(self, layout: Layout) -> Candidate:
        terms = self._terms(layout)
        return Candidate(layout, self.memory.total(layout), relative_step_time(terms), terms)

    def _terms(self, layout: Layout) -> tuple[tuple[str, float], ...]:
        """The layout's step-time terms; its stack only matters to selective recompute
        (torchtitan's is op-level), so only those layouts look it up."""
        stack = self.memory.totals.stack(layout) if layout.recompute == "selective" else ""
        return step_terms(layout, self.space.seq_len, self.space.gpus_per_node,
                          self.space.arch.layers, self.virtual_stages, self.space.arch, stack)

    def at(self, gpus: int) -> CountResult:
        """Best layout on exactly ``gpus`` GPUs (cached per count)."""
        found = self._counts.get(gpus)
        if found is not None:
            return found
        result = CountResult(gpus)
        shapes = self.probes.counts.get(gpus)
        if shapes is None:
            shapes = self.probes.counts[gpus] = [
                (s, lean) for s in structures(gpus, self.space)
                if (lean := leanest(self.space, s)) is not None]
        leans = [lean for _, lean in shapes]
        for s, lean_layout in shapes:
            if not self.memory.fits(lean_layout, self.budget):
                continue
            best = self._best_knobs(s)
            if best is not None:
                result.fitting.append(best)
        if self.space.cp_last_resort and any(c.layout.cp == 1 for c in result.fitting):
            result.fitting = [c for c in result.fitting if c.layout.cp == 1]
        for best in result.fitting:
            if result.best is None or _better(best, result.best):
                result.best = best
        if result.best is not None and len(result.fitting) > 1:
            result.best = self._safer(result.best, result.fitting)
        if result.best is None and self.leanest_wanted:
            result.leanest = self._leanest(leans)
        result.fitting.sort(key=lambda c: (c.step_time, c.total_bytes))
        self._counts[gpus] = result
        return result

    def _safer(self, best: Candidate, fitting: list[Candidate]) -> Candidate:
        """The fastest layout, unless its error band reaches past the card's memory and one
        within NEAR_TIE of its step time stays inside: for a run of weeks a few percent of
        speed is not worth an OOM (review 22: 73.9 GB, band to 88.7, over ZeRO-1 + TP=2 at
        57.1 GB for +2%)."""
        if not self._borderline(best):
            return best
        near = [c for c in fitting if c.step_time <= best.step_time * (1 + NEAR_TIE)
                and c is not best and not self._borderline(c)]
        return min(near, key=lambda c: (c.step_time, c.total_bytes)) if near else best

    def _borderline(self, found: Candidate) -> bool:
        job = self.memory.job(found.layout)
        if job.gpu is None:
            return False
        return band_for(job, found.total_bytes).high_bytes > job.gpu.memory_bytes_usable

    def _leanest(self, layouts: list[Layout]) -> Candidate | None:
        """The first layout with the lowest total. Branch and bound: layouts are tried by
        their lower bound, lowest first, and none is evaluated whose bound shows it cannot
        beat the lowest so far (a tie goes to the earlier layout)."""
        memory = self.memory
        lowest: tuple[int, int] | None = None  # (total, index in ``layouts``)
        for bound, index, lay in sorted((memory.lower_bound(lay), i, lay)
                                        for i, lay in enumerate(layouts)):
            if lowest is not None and (bound, index) > lowest:
                if bound > lowest[0]:
                    break  # every layout left has a bound above the lowest total
                continue
            if lowest is not None and (memory.floor(lay), index) > lowest:
                continue
            found = (memory.total(lay), index)
            if lowest is None or found < lowest:
                lowest = found
        return self.candidate(layouts[lowest[1]]) if lowest is not None else None

    def _best_knobs(self, s: Structure) -> Candidate | None:
        """The fastest knob setting of a structure that fits; among equally fast ones the
        higher ZeRO stage (less memory: ZeRO-1 costs no more traffic than plain DDP)."""
        ranked = self.ranked.get(s)
        if ranked is None:
            ranked = self.ranked[s] = [lay for *_, lay in sorted(
                (relative_step_time(self._terms(lay)), -lay.zero_stage, i, lay)
                for i, lay in enumerate(knob_layouts(self.space, s)))]
        for lay in ranked:
            if self.memory.fits(lay, self.budget):
                return self.candidate(lay)
        return None


def _better(a: Candidate, b: Candidate) -> bool:
    """Faster wins; equal speed (within 0.1%): more memory to spare."""
    if abs(a.step_time - b.step_time) > 1e-3 * b.step_time:
        return a.step_time < b.step_time
    return a.total_bytes < b.total_bytes


def states_lower_bound(memory: MemoryModel, budget: int) -> int:
    """Fewest GPUs that could hold all model states if they were spread perfectly."""
    states, context = memory.states_floor()
    room = budget - context
    if room <= 0:
        return MAX_GPUS + 1
    return max(1, -(-states // room))


def candidate_counts(lower: int, per_node: int) -> Iterator[int]:
    """Powers of two up to one node, then whole nodes one by one (LINEAR_NODE_STEPS of them)."""
    count = 1
    while count < per_node:
        if count >= lower:
            yield count
        count *= 2
    if per_node >= lower:
        yield per_node
    first = max(2, -(-lower // per_node))
    for nodes in range(first, first + LINEAR_NODE_STEPS):
        if nodes * per_node > MAX_GPUS:
            return
        yield nodes * per_node


def fewest(searcher: Searcher, lower: int, with_miss: bool = True,
           ceiling: int = MAX_GPUS) -> tuple[CountResult | None, CountResult | None]:
    """(first count that fits, the last count tried that did not) or (None, last miss).

    Counts one by one from the lower bound; past LINEAR_NODE_STEPS nodes, ``shape_search``.
    ``with_miss`` False: the count just below a shape search's answer is not searched.
    ``ceiling``: no count above it is of interest (None when nothing up to it fits).
    """
    miss: CountResult | None = None
    floor = lower
    for count in candidate_counts(lower, searcher.space.gpus_per_node):
        if count > ceiling:
            return None, miss
        result = searcher.at(count)
        if result.best is not None:
            return result, miss
        miss, floor = result, count + 1
    found = shape_search(searcher, floor, ceiling)
    if found is None:
        return None, miss
    per_node = searcher.space.gpus_per_node
    below = found - per_node if found > per_node else found // 2
    if below >= floor and with_miss:
        miss = searcher.at(below)  # the count just below, to say why it falls short
    result = searcher.at(found)
    return (result if result.best is not None else None), miss


def shape_search(searcher: Searcher, floor: int, ceiling: int = MAX_GPUS) -> int | None:
    """Fewest GPUs in [floor, ceiling] over all model shapes (tp, cp, pp, ep): for each, the
    smallest data-parallel size whose leanest layout fits, by bisection (with the shape fixed,
    more data-parallel ranks never need more memory per GPU: ZeRO shards more, routed experts
    spread over more ranks, fewer micro-batches are in flight; the expert-parallel size is part
    of the shape because it must divide dp).

    Pipeline sizes with the same layers per stage (ceil(L/pp)) hold the same model states per
    GPU, and a larger one keeps more micro-batches in flight: per GPU it never needs less
    memory at the same dp, on more GPUs. So once a stage count whose replicas make whole nodes
    (every dp is valid for it) has been searched, the larger stage counts of its class only
    need the dp it did not search (below the floor for it, above for them)."""
    space, per_node = searcher.space, searcher.space.gpus_per_node
    probes = searcher.probes
    best = min(ceiling, MAX_GPUS) + 1
    divisors_of_batch = dp_sizes(space, MAX_GPUS) if space.global_batch else []
    eps = shape_expert_sizes(space)
    # per (tp, cp, layers per stage): the replica size of the smallest stage count of the class
    # whose replicas make whole nodes
    dominant: dict[tuple[int, int, int], int] = {}
    if probes.shapes is None:
        probes.shapes = model_shapes(space)
    for tp, cp, pp in probes.shapes:
        size = tp * cp * pp
        if size >= best:
            break
        low_dp, cap = -(-floor // size), MAX_GPUS
        stage_class = (tp, cp, -(-space.arch.layers // pp))
        if stage_class in dominant:  # left: the small dp the dominating shape did not search
            cap = -(-floor // dominant[stage_class]) - 1
        elif pp > 1 and size % per_node == 0:
            dominant[stage_class] = size
        for ep in eps:
            limit = min(cap, (best - 1) // size)
            options: Sequence[int]
            if space.global_batch:
                valid = probes.whole_nodes.get((size, ep))
                if valid is None:
                    valid = probes.whole_nodes[(size, ep)] = [
                        d for d in divisors_of_batch
                        if d % ep == 0 and counts_ok(d * size, per_node)]
                options = valid[bisect.bisect_left(valid, low_dp):
                                bisect.bisect_right(valid, limit)]
            else:  # any dp: multiples of what makes whole nodes and of the EP size
                step = math.lcm(per_node // math.gcd(size, per_node), ep)
                options = range(-(-low_dp // step) * step, limit + 1, step)

            def fits(dp: int, tp: int = tp, cp: int = cp, pp: int = pp, ep: int = ep) -> bool:
                key = (dp, tp, cp, pp, ep)
                if key in probes.layouts:
                    lay = probes.layouts[key]
                else:
                    found = _shape_structure(space, dp, tp, cp, pp, ep)
                    lay = probes.layouts[key] = leanest(space, found) if found else None
                return lay is not None and searcher.memory.fits(lay, searcher.budget)

            if not options or not fits(options[-1]):
                continue
            low, high = -1, len(options) - 1  # options[high] fits
            while high - low > 1:
                mid = (low + high) // 2
                if fits(options[mid]):
                    high = mid
                else:
                    low = mid
            best = min(best, options[high] * size)
    return best if best <= min(ceiling, MAX_GPUS) else None


def shape_expert_sizes(space: SearchSpace) -> tuple[int, ...]:
    """The expert-parallel sizes a shape may take: 1 for a dense model, the stated one, else
    every size that divides the routed experts, largest (leanest) first."""
    arch = space.arch
    if arch.moe is None:
        return (1,) if space.eps in (None, (1,)) else ()
    options = space.eps if space.eps is not None else tuple(divisors(arch.moe.experts))
    return tuple(sorted((ep for ep in options if arch.moe.experts % ep == 0), reverse=True))


def _shape_structure(space: SearchSpace, dp: int, tp: int, cp: int, pp: int,
                     ep: int) -> Structure | None:
    if not dp_ok(space, dp, dp * tp * cp * pp, cp) or dp % ep:
        return None
    return Structure(dp, tp, pp, cp, ep)
