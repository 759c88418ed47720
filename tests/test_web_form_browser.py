"""The home form in a real headless Chromium, on a phone's 390 px: a typo comes back as the form,
filled in, with the problem next to the field and a link to the closest name; following the link
opens the report. Nothing is wider than the window, and nothing is fetched from anywhere else."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from api_support import free_port
from browser_support import OFFLINE, Page, browser, chromium_binary, live_server

BINARY = chromium_binary()
pytestmark = pytest.mark.skipif(BINARY is None and not os.environ.get("CI"),
                                reason="no chromium (.ci/run installs it)")


def _document_statuses(page: Page) -> list[int]:
    return [e["params"]["response"]["status"] for e in page.events
            if e.get("method") == "Network.responseReceived"
            and e["params"].get("type") == "Document"]


def _fits(page: Page) -> bool:
    return bool(page.evaluate("document.documentElement.scrollWidth <= "
                              "document.documentElement.clientWidth"))


def test_a_typo_in_the_form_comes_back_as_a_page(tmp_path: Path) -> None:
    assert BINARY is not None
    shots = Path(os.environ.get("FITCHECK_SCREENSHOTS") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    with live_server(free_port()) as base, browser(BINARY, free_port(), OFFLINE) as page:
        page.set_viewport(390)
        page.open(base + "/")
        assert _fits(page)
        page.evaluate("document.querySelector('[name=model]').value = 'mistrall large 2';"
                      "document.querySelector('[name=task]').value = 'infer';"
                      "document.querySelector('[name=seq_len]').value = '32768';"
                      "document.querySelector('[name=gpu]').value = 'h100-80gb';"
                      "document.querySelector('form').submit()")
        page.wait_for("Page.loadEventFired")
        page.screenshot(shots / "form-typo-390.png")
        assert _document_statuses(page)[-1] == 422
        assert page.evaluate("document.querySelector('[name=model]').value") == "mistrall large 2"
        assert page.evaluate("document.querySelector('[name=task]').value") == "infer"
        assert page.evaluate("document.querySelector('[name=model]').getAttribute("
                             "'aria-invalid')") == "true"
        error = page.evaluate("document.getElementById('error-model').textContent")
        assert "Did you mean mistral-large-2" in error
        assert _fits(page)

        page.evaluate("document.querySelector('#error-model a').click()")
        page.wait_for("Page.loadEventFired")
        assert page.evaluate("location.pathname + location.search") == (
            "/v1/estimate?model=mistral-large-2&task=infer&seq_len=32768&gpu=h100-80gb")
        assert page.evaluate("document.getElementById('verdict') !== null")
        assert _fits(page)
        own = urlsplit(base).netloc
        assert all(urlsplit(u).netloc == own for u in page.requested_urls()
                   if u.startswith("http"))
        # the one failed load chromium logs is the 422 page itself: a typo is a bad value
        assert [e for e in page.errors if "status of 422" not in e] == []
        others = [e["params"]["response"]["status"] for e in page.events
                  if e.get("method") == "Network.responseReceived"
                  and e["params"].get("type") != "Document"]
        assert all(status == 200 for status in others)
