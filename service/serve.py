"""``fitcheck serve``: the app under uvicorn, with the settings' host and port; uvicorn's own
logs are JSON too."""

from __future__ import annotations

from typing import Any

import uvicorn

from service.settings import Settings


def log_config(level: str) -> dict[str, Any]:
    handler = {"class": "logging.StreamHandler", "formatter": "json",
               "stream": "ext://sys.stderr"}
    return {
        "version": 1, "disable_existing_loggers": False,
        "formatters": {"json": {"()": "service.observability.JsonFormatter"}},
        "handlers": {"default": handler},
        "loggers": {name: {"handlers": ["default"], "level": level.upper(), "propagate": False}
                    for name in ("uvicorn", "uvicorn.error")},
    }


def serve(host: str | None = None, port: int | None = None) -> int:
    settings = Settings()
    uvicorn.run("service.app:app", host=host or settings.host, port=port or settings.port,
                access_log=False, log_config=log_config(settings.log_level), proxy_headers=True)
    return 0
