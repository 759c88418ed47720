"""The report page in a real headless Chromium: it loads with no console errors, the chart is
there, and a person can go from the home page's form to an estimate's permalink."""

from __future__ import annotations

import os

import httpx
import pytest
from api_support import TRAIN, free_port
from browser_support import browser, chromium_binary, live_server

BINARY = chromium_binary()
# Skipped on a developer machine without chromium; in CI (.ci/run installs it) a missing
# browser is a failure, not a skip.
pytestmark = pytest.mark.skipif(BINARY is None and not os.environ.get("CI"),
                                reason="no chromium (.ci/run installs it)")


def test_report_page_in_a_browser() -> None:
    assert BINARY is not None
    with live_server(free_port()) as base, browser(BINARY, free_port()) as page:
        answer = httpx.post(f"{base}/v1/estimate", json={**TRAIN, "tokens": 1e12}).json()
        page.open(answer["link"])
        assert page.errors == []
        assert page.evaluate("document.querySelectorAll('#memory-chart rect.seg').length") >= 5
        assert page.evaluate("document.querySelectorAll('#memory-chart .capacity').length") >= 1
        assert page.evaluate("document.getElementById('verdict').textContent").startswith(
            "Fits on 8x")
        assert page.evaluate("document.querySelectorAll('#fits-on tr').length") > 10
        assert page.evaluate("document.querySelector('#compute') !== null")
        assert page.evaluate("performance.getEntriesByType('resource').length") == 0

        page.open(base + "/")
        page.evaluate("document.querySelector('[name=model]').value = 'Llama 3 8B';"
                      "document.querySelector('[name=gpu]').value = 'a100-40gb';"
                      "document.querySelector('[name=seq_len]').value = '4096';"
                      "document.querySelector('form').submit()")
        page.wait_for("Page.loadEventFired")
        assert page.errors == []
        # the form's URL (an alias, empty fields) is redirected to the permalink
        assert page.evaluate("location.pathname + location.search") == (
            "/v1/estimate?model=llama-3-8b&seq_len=4096&gpu=a100-40gb")
        assert page.evaluate("document.querySelector('#memory-chart') !== null")
