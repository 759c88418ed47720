"""How far off an estimate may be: a band around the per-GPU total from the measured error of
that kind of job (``service/data/calibration.json`` ``error_bands``), meant to hold the
measured peak about 9 times in 10. Kinds without measurements get a wider, stated band."""

from __future__ import annotations

from dataclasses import dataclass

from service.core.job.spec import Job
from service.core.memory.calibration import BandSpec, calibration
from service.core.memory.regime import regime_of


@dataclass(frozen=True, slots=True)
class ErrorBand:
    low_bytes: int
    high_bytes: int
    kind: str  # the kind of job the band's errors were measured on
    runs: int  # measured runs of that kind (0: none; a stated band)
    gpu: str  # where they were measured
    basis: str

    def verdict(self, capacity: int) -> str:
        """fits (the whole band fits), does_not_fit (none of it does) or borderline."""
        if self.high_bytes <= capacity:
            return "fits"
        if self.low_bytes > capacity:
            return "does_not_fit"
        return "borderline"


def band_kind(job: Job) -> str:
    """The measured kind a job belongs to (see calibration.json ``error_bands``)."""
    if job.task == "infer":
        return "HF serving" if job.framework == "hf" else "unmeasured"
    if job.parallel.gpus > 1 or job.framework != "hf" or job.activation_model != "hf":
        return "unmeasured"
    regime = regime_of(job)
    if regime.autocast and not regime.adapters:
        return "full training, HF autocast"
    return "pure bf16, LoRA and QLoRA training"


def band_for(job: Job, total: int) -> ErrorBand:
    kind = band_kind(job)
    spec: BandSpec = calibration().bands.get(kind) or calibration().bands["unmeasured"]
    return ErrorBand(round(total * (1 + spec.low)), round(total * (1 + spec.high)), kind,
                     spec.runs, spec.gpu, spec.basis)
