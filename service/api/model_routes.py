"""``GET /v1/models``, ``GET /v1/models/{model_id}``, ``POST /v1/models`` (register)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path
from fastapi.responses import JSONResponse

from service.api.deps import ServicesDep, require_writer
from service.api.problems import ApiProblem
from service.core.errors import InvalidInput
from service.core.model.presets import lookup_preset
from service.registry import (
    Conflict,
    build_document,
    preset_summaries,
    preset_summary,
    registered_summary,
)
from service.schemas.model_schemas import ModelDetail, ModelIn, ModelList
from service.schemas.problem import PROBLEM_RESPONSES
from service.store.base import StoreUnavailable

router = APIRouter(prefix="/v1", tags=["models"])


@router.get("/models", summary="List built-in and registered models", response_model=None,
            responses={200: {"model": ModelList, "description": "Every model"}})
async def list_models(svc: ServicesDep) -> JSONResponse:
    """Built-in presets (published configurations, parameter counts) and the models teams
    registered. While Redis is down, `registry` is `down` and the registered models are the ones
    this replica has seen."""
    registered, answered = await svc.registry.all()
    state = "embedded" if svc.store.kind == "embedded" else ("up" if answered else "down")
    models = [*preset_summaries(), *(registered_summary(d) for d in registered)]
    return JSONResponse({"models": models, "registry": state})


@router.get("/models/{model_id}", summary="One model, with its architecture and params_total",
            response_model=None,
            responses={200: {"model": ModelDetail, "description": "The model"},
                       **PROBLEM_RESPONSES})
async def get_model(
    model_id: Annotated[str, Path(max_length=200, description="id or alias",
                                  examples=["llama-3-8b"])],
    svc: ServicesDep,
) -> JSONResponse:
    """A preset by id or any alias (`Llama 3 8B`, `meta-llama/Meta-Llama-3-8B`), or a
    registered model by id; 404 with the closest names otherwise."""
    preset = lookup_preset(model_id)
    if preset is not None:
        return JSONResponse(preset_summary(preset, full=True))
    document = await svc.registry.get(model_id)
    if document is None:
        raise svc.registry.unknown(model_id)
    return JSONResponse(registered_summary(document, full=True))


@router.post("/models", summary="Register a team's model", status_code=201,
             response_model=None, dependencies=[Depends(require_writer)],
             responses={201: {"model": ModelDetail, "description": "Registered"},
                        200: {"model": ModelDetail, "description": "Already registered, same "
                              "architecture"},
                        401: PROBLEM_RESPONSES[422] | {"description": "API key missing or wrong"},
                        409: PROBLEM_RESPONSES[422] | {"description": "The id is taken"},
                        **PROBLEM_RESPONSES})
async def register_model(body: ModelIn, svc: ServicesDep) -> JSONResponse:
    """Stores the model in Redis, where every replica sees it; use its id as `model` in
    estimates. Ids are permanent: registering the same id again with the same architecture
    answers 200, with another one 409. Redis down: 503 with `Retry-After`."""
    try:
        document = build_document(body.id, body.arch, body.name, body.description)
    except InvalidInput as exc:
        field = exc.field if exc.field in ("id",) or exc.field.startswith("arch") \
            else "arch." + exc.field
        raise InvalidInput(field, exc.message, exc.accepted) from exc
    except Conflict as exc:
        raise ApiProblem(409, "Conflict", str(exc), "model-exists") from exc
    try:
        stored, created = await svc.registry.register(document)
    except Conflict as exc:
        raise ApiProblem(409, "Conflict", str(exc), "model-exists") from exc
    except StoreUnavailable as exc:
        seconds = max(1, round(exc.retry_after + 0.5))
        raise ApiProblem(503, "Service Unavailable", "cannot register now: the model registry "
                         f"(Redis) is unreachable. Nothing was stored; retry in {seconds} s.",
                         "registry-unavailable", {"Retry-After": str(seconds)},
                         retry_after_s=seconds) from exc
    out: dict[str, Any] = registered_summary(stored, full=True)
    return JSONResponse(out, status_code=201 if created else 200)
