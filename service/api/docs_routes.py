"""``/docs`` (Swagger UI) and ``/redoc`` that work with no internet: their scripts, stylesheet and
favicon are served from the ``fastapi-offline`` package under ``/docs/assets``, and the pages
name no other host (FastAPI's defaults load them from a CDN and the favicon from its site)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from fastapi import APIRouter, FastAPI, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

ASSETS = "/docs/assets"
ASSET_PACKAGE = "fastapi_offline"  # ships Swagger UI 5 and ReDoc, see pyproject.toml
SWAGGER_PARAMETERS = {
    "validatorUrl": None,  # no badge fetched from validator.swagger.io
    "defaultModelsExpandDepth": 0,  # the schemas section folded: the operations come first
    "tryItOutEnabled": True,
    "displayRequestDuration": True,
}

router = APIRouter(include_in_schema=False)


def assets_directory() -> Path:
    return Path(str(resources.files(ASSET_PACKAGE) / "static"))


def mount_assets(app: FastAPI) -> None:
    """Serve the docs' scripts, stylesheet and favicon from the installed package."""
    app.mount(ASSETS, StaticFiles(directory=assets_directory()), name="docs-assets")


def _root(request: Request) -> str:
    return str(request.scope.get("root_path", "")).rstrip("/")


@router.get("/docs", response_class=HTMLResponse)
async def swagger_ui(request: Request) -> HTMLResponse:
    root = _root(request)
    return get_swagger_ui_html(
        openapi_url=f"{root}/openapi.json", title="fitcheck API",
        swagger_js_url=f"{root}{ASSETS}/swagger-ui-bundle.js",
        swagger_css_url=f"{root}{ASSETS}/swagger-ui.css",
        swagger_favicon_url=f"{root}{ASSETS}/favicon.png",
        oauth2_redirect_url=None, swagger_ui_parameters=SWAGGER_PARAMETERS)


@router.get("/redoc", response_class=HTMLResponse)
async def redoc(request: Request) -> HTMLResponse:
    root = _root(request)
    return get_redoc_html(
        openapi_url=f"{root}/openapi.json", title="fitcheck API",
        redoc_js_url=f"{root}{ASSETS}/redoc.standalone.js",
        redoc_favicon_url=f"{root}{ASSETS}/favicon.png", with_google_fonts=False)
