"""``GET /v1/gpus`` and ``GET /v1/gpus/{gpu_id}``: the GPU catalog."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from service.core.hardware.gpus import all_gpus, find_gpu
from service.schemas.problem import PROBLEM_RESPONSES

router = APIRouter(prefix="/v1", tags=["gpus"])


class GpuOut(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str = Field(description="`<name>-<memory>gb`", examples=["a100-40gb"])
    name: str = Field(description="display name", examples=["NVIDIA A100 40GB SXM"])
    memory_bytes_as_sold: int = Field(description="the vendor's figure", examples=[42949672960])
    memory_bytes_usable: int = Field(description="what a process sees; decides fits",
                                     examples=[42298834944])
    aliases: list[str] = Field(description="other names it answers to", examples=[["A100 40GB"]])


class GpuList(BaseModel):
    gpus: list[GpuOut] = Field(description="every GPU in the catalog: memory, peak FLOP/s, "
                               "bandwidth, NVLink domain, default MFU, price, sources")


@router.get("/gpus", summary="The GPU catalog", response_model=None,
            responses={200: {"model": GpuList, "description": "Every GPU"}})
async def list_gpus() -> JSONResponse:
    """Memory (as sold and usable), bf16/fp8 peaks, bandwidth, NVLink domain, price."""
    return JSONResponse({"gpus": [g.to_dict() for g in all_gpus()]})


@router.get("/gpus/{gpu_id}", summary="One GPU by id or alias", response_model=None,
            responses={200: {"model": GpuOut, "description": "The GPU"}, **PROBLEM_RESPONSES})
async def get_gpu(gpu_id: Annotated[str, Path(max_length=200, description="id or alias",
                                               examples=["h100-80gb"])]) -> JSONResponse:
    """`a100-40gb`, `A100 40GB`, `h100s`, `4090`; 404 with the closest ids otherwise."""
    gpu: Any = find_gpu(gpu_id)
    return JSONResponse(gpu.to_dict())
