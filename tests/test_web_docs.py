"""The API docs work offline: /docs and /redoc name no other host, their scripts, stylesheet
and favicon come from the service itself (the fastapi-offline package), and in a headless
Chromium with every other host unresolvable /docs renders the operations and asks no other
host for anything."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from api_support import client, free_port
from browser_support import OFFLINE, Page, browser, chromium_binary, live_server
from fastapi.testclient import TestClient

BINARY = chromium_binary()
ASSET = re.compile(r"""(?:href|src)\s*=\s*["']([^"']+)["']""")


@pytest.fixture(scope="module")
def api() -> Iterator[TestClient]:
    with client() as c:
        yield c


@pytest.mark.parametrize("path", ["/docs", "/redoc"])
def test_docs_pages_name_only_their_own_origin(api: TestClient, path: str) -> None:
    page = api.get(path)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "http://" not in page.text and "https://" not in page.text
    assert "//" not in "".join(re.findall(r"""["'](//[^"']*)""", page.text))
    urls = ASSET.findall(page.text)
    assert urls, "the page loads its assets"
    for url in urls:
        assert url.startswith("/") and not url.startswith("//"), url
        served = api.get(url)
        assert served.status_code == 200, url
        assert len(served.content) > 1000, url


def test_docs_assets_are_the_real_files(api: TestClient) -> None:
    script = api.get("/docs/assets/swagger-ui-bundle.js")
    assert script.headers["content-type"].startswith("text/javascript")
    assert b"SwaggerUIBundle" in script.content
    assert api.get("/docs/assets/swagger-ui.css").headers["content-type"].startswith("text/css")
    assert api.get("/docs/assets/favicon.png").content.startswith(b"\x89PNG")
    assert api.get("/docs/assets/nothing-here.js").status_code == 404
    assert api.get("/openapi.json").json()["paths"]["/v1/estimate"]


def _wait_for(page: Page, expression: str, limit_s: float = 30) -> object:
    deadline = time.monotonic() + limit_s
    while True:
        value = page.evaluate(expression)
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.1)


@pytest.mark.skipif(BINARY is None and not os.environ.get("CI"),
                    reason="no chromium (.ci/run installs it)")
def test_docs_render_with_the_network_cut() -> None:
    assert BINARY is not None
    with live_server(free_port()) as base, browser(BINARY, free_port(), OFFLINE) as page:
        page.open(base + "/docs")
        operations = _wait_for(page, "Array.from(document.querySelectorAll('.opblock-summary-path'))"
                                     ".map(e => e.textContent.replace(/\\u200b/g, ''))")
        assert isinstance(operations, list)
        assert "/v1/estimate" in operations and "/v1/ask" in operations
        assert page.evaluate("document.querySelector('.swagger-ui .info .title') !== null")
        own = urlsplit(base).netloc
        others = [u for u in page.requested_urls()
                  if urlsplit(u).scheme in ("http", "https") and urlsplit(u).netloc != own]
        assert others == []
        assert any(u.endswith("/openapi.json") for u in page.requested_urls())
        assert page.errors == []
