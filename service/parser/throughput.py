"""An achieved throughput stated per GPU ("147 TFLOPs per GPU", as the OPT and BLOOM papers
report theirs) as the MFU the time answers take: the TFLOP/s over the GPU's dense bf16 peak."""

from __future__ import annotations

from typing import Any

from service.core.errors import UnknownName
from service.core.hardware.gpus import find_gpu


def mfu_from_tflops(tflops: float, gpu_id: Any, notes: list[str]) -> float | None:
    """The MFU that ``tflops`` per GPU is on ``gpu_id`` (None without a known GPU or a peak, or
    above the peak)."""
    if not isinstance(gpu_id, str):
        return None
    try:
        gpu = find_gpu(gpu_id)
    except UnknownName:
        return None
    peak = gpu.bf16_dense_tflops or gpu.fp16_dense_tflops
    if not peak or tflops >= peak:
        return None
    share = round(tflops / peak, 3)
    notes.append(f"{tflops:g} TFLOP/s per GPU read as MFU {share:.0%} of the {gpu.name}'s "
                 f"{peak:g} bf16 peak (if the figure counts recomputed FLOPs, the model's own "
                 "MFU is lower)")
    return share
