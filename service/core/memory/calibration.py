"""Measured constants of the memory model, read once from ``service/data/calibration.json``,
each with its source (see the file)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any


@dataclass(frozen=True, slots=True)
class Measured:
    value: float
    source: str


@dataclass(frozen=True, slots=True)
class BandSpec:
    """Measured relative error of a kind of job: the total is off by ``low``..``high``."""

    low: float
    high: float
    runs: int
    gpu: str
    basis: str


@dataclass(frozen=True, slots=True)
class Calibration:
    non_torch_bytes: Measured
    cublas_workspace_bytes: Measured
    nccl_bytes: Measured
    fragmentation_share: Measured
    stranded_transient_share: Measured
    bands: dict[str, BandSpec]


def _measured(data: dict[str, Any], key: str) -> Measured:
    entry = data[key]
    return Measured(float(entry["value"]), str(entry["source"]))


@cache
def calibration() -> Calibration:
    data = json.loads(files("service.data").joinpath("calibration.json").read_text("utf-8"))
    bands = {kind: BandSpec(float(b["low"]), float(b["high"]), int(b["runs"]), str(b["gpu"]),
                            str(b["basis"]))
             for kind, b in data["error_bands"]["kinds"].items()}
    return Calibration(
        non_torch_bytes=_measured(data, "non_torch_bytes"),
        cublas_workspace_bytes=_measured(data, "cublas_workspace_bytes"),
        nccl_bytes=_measured(data, "nccl_bytes"),
        fragmentation_share=_measured(data, "fragmentation_share"),
        stranded_transient_share=_measured(data, "stranded_transient_share"),
        bands=bands)
