"""Permalinks: the whole request as a short, stable query string (``GET /v1/estimate?...``).

Fields appear in ``EstimateRequest`` order and only when stated; names are normalised (preset and
GPU ids, so "Llama 3 8B" and "llama-3-8b" give one link); numbers in their shortest exact form
(``tokens=1e12``); booleans as true/false; an inline ``arch`` as ``z`` + base64url of its
zlib-compressed compact JSON. The same request always gives the same link, and a typical one
(model, sequence length, ZeRO stage, GPU and count) is under 100 characters after the host.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import zlib
from typing import Any
from urllib.parse import quote

from service.core.errors import InvalidInput, UnknownName
from service.core.hardware.gpus import find_gpu
from service.core.job.request import EstimateRequest
from service.core.model.presets import lookup_preset

PATH = "/v1/estimate"
MAX_ARCH_JSON = 1 << 20


def normalise(request: EstimateRequest) -> EstimateRequest:
    """The same request with preset and GPU names replaced by their ids (when they resolve)."""
    changes: dict[str, Any] = {}
    if request.model is not None:
        preset = lookup_preset(request.model)
        changes["model"] = preset.id if preset else request.model.strip()
    if request.gpu is not None:
        with contextlib.suppress(UnknownName):
            changes["gpu"] = find_gpu(request.gpu).id
    if all(getattr(request, name) == value for name, value in changes.items()):
        return request  # already canonical: no second request to build and check
    return EstimateRequest(**{**request.stated(), **changes})


def query_string(request: EstimateRequest) -> str:
    """``model=llama-3-8b&seq_len=4096&gpu=a100-40gb``: canonical and URL-safe."""
    parts = []
    for name, value in request.stated().items():
        parts.append(f"{name}={quote(_text(value), safe='')}")
    return "&".join(parts)


def link(base_url: str, request: EstimateRequest) -> str:
    query = query_string(request)
    return f"{base_url.rstrip('/')}{PATH}" + (f"?{query}" if query else "")


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return short_float(value)
    if isinstance(value, dict):
        return encode_arch(value)
    return str(value)


def short_float(value: float) -> str:
    """The shortest text that reads back as exactly ``value``: 0.4, 1e12, 2.5e-05 -> 2.5e-5."""
    if value == 0:
        return "0"
    candidates = [repr(value)]
    if value.is_integer() and abs(value) < 1e16:
        candidates.append(str(int(value)))
    mantissa, _, exponent = f"{value:.16e}".partition("e")
    for digits in range(17):
        m = f"{float(mantissa):.{digits}f}"
        m = m.rstrip("0").rstrip(".") if "." in m else m
        text = f"{m}e{int(exponent)}"
        if float(text) == value:
            candidates.append(text)
            break
    return min((c for c in candidates if float(c) == value), key=len)


def encode_arch(arch: dict[str, Any]) -> str:
    data = json.dumps(arch, separators=(",", ":"), sort_keys=True).encode()
    return "z" + base64.urlsafe_b64encode(zlib.compress(data, 9)).decode().rstrip("=")


def decode_arch(text: str) -> dict[str, Any]:
    """The inverse of ``encode_arch``; a plain JSON object is accepted too."""
    accepted = "z + base64url(zlib(JSON object)), as in an answer's link, or a JSON object"
    try:
        if text.startswith("{"):
            data = json.loads(text)
        else:
            if not text.startswith("z"):
                raise ValueError("no z prefix")
            raw = base64.urlsafe_b64decode(text[1:] + "=" * (-len(text[1:]) % 4))
            inflater = zlib.decompressobj()
            plain = inflater.decompress(raw, MAX_ARCH_JSON)
            if inflater.unconsumed_tail:
                raise ValueError("too large")
            data = json.loads(plain)
    except (ValueError, binascii.Error, zlib.error, RecursionError) as exc:
        raise InvalidInput("arch", "cannot be decoded", accepted) from exc
    if not isinstance(data, dict):
        raise InvalidInput("arch", "must be a JSON object", accepted)
    return data
