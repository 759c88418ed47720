"""Per-GPU memory of a candidate layout on one GPU type: the shared totals (``layout_totals.py``)
and the engine's full breakdown of the layout the plan shows."""

from __future__ import annotations

from dataclasses import replace
from functools import cached_property

from service.core.hardware.gpus import Gpu
from service.core.job.resolve import ResolvedJob
from service.core.job.spec import Job
from service.core.memory.breakdown import Estimate
from service.core.memory.training_memory import training_estimate
from service.core.planning.layout_totals import LayoutTotals, totals_for
from service.core.planning.plan_types import Layout


class MemoryModel:
    """Per-GPU bytes of layouts of one resolved training job on one GPU type."""

    def __init__(self, resolved: ResolvedJob, gpu: Gpu,
                 totals: LayoutTotals | None = None) -> None:
        self.resolved = resolved
        self.gpu = gpu
        self.totals = totals if totals is not None else totals_for(resolved)

    @cached_property
    def base(self) -> Job:
        """The resolved job on this GPU type (built when a layout's full breakdown is asked
        for: the totals do not read the GPU)."""
        return replace(self.resolved.job, gpu=self.gpu)

    @property
    def evaluations(self) -> int:
        return self.totals.evaluations

    def act_model(self, layout: Layout) -> str:
        return self.totals.act_model(layout)

    def job(self, layout: Layout) -> Job:
        """The engine's Job for a layout on this GPU type."""
        return self.totals.job(layout, self.base)

    def total(self, layout: Layout) -> int:
        """Per-GPU total in bytes, as ``training_estimate`` reports it (cached per layout)."""
        return self.totals.total(layout)

    def fits(self, layout: Layout, budget: int) -> bool:
        return self.totals.fits(layout, budget)

    def lower_bound(self, layout: Layout) -> int:
        return self.totals.lower_bound(layout)

    def floor(self, layout: Layout) -> int:
        return self.totals.floor(layout)

    def states_floor(self) -> tuple[int, int]:
        """(all model states on one GPU, what lives outside PyTorch on one GPU): neither reads
        the GPU type (``LayoutTotals.states_floor``)."""
        return self.totals.states_floor()

    def estimate(self, layout: Layout) -> Estimate:
        """The engine's full breakdown of a layout (formulas and sources)."""
        return training_estimate(self.job(layout))
