"""The fits-on table: for every GPU in the catalog, the fewest GPUs and the layout.

Training: one table of totals serves every GPU type (per-GPU bytes of a layout do not depend
on the GPU, ``layout_totals.py``), GPU types with the same search space and budget share one
search, and a space's budgets are searched largest first: where one fits nowhere, no smaller
one does, and a smaller one needs at least the GPUs the larger one needed. Serving: the fewest
tensor/pipeline-parallel GPUs per type (``serving_plan.py``).
"""

from __future__ import annotations

from dataclasses import replace

from service.core.hardware.gpus import Gpu, all_gpus
from service.core.job.resolve import ResolvedJob
from service.core.planning.layouts import SearchSpace, Structure, node_count
from service.core.planning.plan_types import Candidate, FitsOnRow, Layout
from service.core.planning.search import fewest, states_lower_bound
from service.core.planning.search_setup import budget_bytes, build_space, make_searcher, per_node
from service.core.planning.serving_plan import fewest_serving, serving_budget
from service.core.planning.serving_shapes import stated_shape


def _price(gpu: Gpu, count: int | None) -> float | None:
    if count is None or gpu.price_per_gpu_hour_usd is None:
        return None
    return round(gpu.price_per_gpu_hour_usd * count, 2)


def fits_on_training(resolved: ResolvedJob, gpus: list[Gpu] | None = None) -> list[FitsOnRow]:
    catalog = gpus if gpus is not None else all_gpus()
    spaces = {gpu.id: build_space(resolved, gpu) for gpu in catalog}
    found = _fewest_by_budget(resolved, catalog, spaces)
    rows: list[FitsOnRow] = []
    for gpu in catalog:
        space = spaces[gpu.id]
        best, budget = found[(space, budget_bytes(resolved, gpu))]
        count = best.layout.gpus if best is not None else None
        rows.append(FitsOnRow(
            gpu.id, gpu.name, count,
            node_count(count, space.gpus_per_node) if count else None,
            f"{best.layout.describe()} ({best.layout.shape()})" if best else "does not fit",
            best.total_bytes if best else None, budget, _price(gpu, count)))
    return rows


def _fewest_by_budget(resolved: ResolvedJob, catalog: list[Gpu],
                      spaces: dict[str, SearchSpace]
                      ) -> dict[tuple[SearchSpace, int], tuple[Candidate | None, int]]:
    """The fewest-GPU candidate per (search space, budget): GPU types with the same space (node
    size, NVLink domain) and budget have the same answer, searched once. Within a space, the
    largest budget first: every layout that fits a smaller budget fits the larger one, so where
    the larger budget fits nowhere, neither does the smaller."""
    gpus_of: dict[tuple[SearchSpace, int], Gpu] = {}
    for gpu in catalog:
        gpus_of.setdefault((spaces[gpu.id], budget_bytes(resolved, gpu)), gpu)
    found: dict[tuple[SearchSpace, int], tuple[Candidate | None, int]] = {}
    fits_nowhere: set[SearchSpace] = set()
    ranked: dict[SearchSpace, dict[Structure, list[Layout]]] = {}
    # within a space, a smaller budget needs at least the GPUs a larger one needed
    at_least: dict[SearchSpace, int] = {}
    for (space, budget), gpu in sorted(gpus_of.items(), key=lambda item: -item[0][1]):
        if space in fits_nowhere:
            found[(space, budget)] = (None, budget)
            continue
        searcher = make_searcher(resolved, gpu, space)
        searcher.leanest_wanted = False
        searcher.ranked = ranked.setdefault(space, searcher.ranked)
        lower = max(states_lower_bound(searcher.memory, searcher.budget), at_least.get(space, 1))
        hit, _ = fewest(searcher, lower, with_miss=False)
        found[(space, budget)] = (hit.best if hit is not None else None, searcher.budget)
        if hit is None:
            fits_nowhere.add(space)
        elif hit.best is not None:
            at_least[space] = hit.best.layout.gpus
    return found


def fits_on_serving(resolved: ResolvedJob, gpus: list[Gpu] | None = None) -> list[FitsOnRow]:
    budget = serving_budget(resolved)
    rows: list[FitsOnRow] = []
    for gpu in gpus if gpus is not None else all_gpus():
        fit, _ = fewest_serving(replace(resolved.job, gpu=gpu), gpu, per_node(resolved, gpu),
                                budget, stated_shape(resolved))
        count = fit.gpus if fit else None
        shape = f"{fit.shape()}; up to {fit.max_concurrent:,} sequences" if fit \
            else "does not fit"
        rows.append(FitsOnRow(gpu.id, gpu.name, count, fit.nodes if fit else None, shape,
                              fit.total_bytes if fit else None,
                              round(gpu.memory_bytes_usable * budget.memory_fraction),
                              _price(gpu, count)))
    return rows


def fits_on(resolved: ResolvedJob) -> list[FitsOnRow]:
    if resolved.job.task == "infer":
        return fits_on_serving(resolved)
    return fits_on_training(resolved)
