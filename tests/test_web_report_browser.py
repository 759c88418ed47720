"""The report in a real headless Chromium, at a desktop's 1280 px and a phone's 390 px, on
screen and in print: nothing wider than the window (document scrollWidth <= clientWidth), the
chart's labels apart from each other and inside the picture, no console errors, no request
anywhere. Screenshots go to $FITCHECK_SCREENSHOTS (or the test's temporary directory); the
path is printed."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from api_support import free_port
from browser_support import OFFLINE, Page, browser, chromium_binary
from report_cases import CASES, report_answer

from service.web.report import render_report

BINARY = chromium_binary()
pytestmark = pytest.mark.skipif(BINARY is None and not os.environ.get("CI"),
                                reason="no chromium (.ci/run installs it)")
WIDTHS = (1280, 390)
TOLERANCE = 0.5  # px: sub-pixel rounding of glyph boxes

MEASURE = """(() => {
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  const root = document.documentElement;
  const svg = Array.from(document.querySelectorAll('.chart svg'))
    .find(s => getComputedStyle(s).display !== 'none');
  const box = r => ({left: r.left, top: r.top, right: r.right, bottom: r.bottom});
  const wide = Array.from(document.querySelectorAll('body *'))
    .filter(e => e.getBoundingClientRect().right > root.clientWidth + 0.5)
    .slice(0, 5).map(e => e.tagName + '#' + e.id + '.' + e.className);
  return {scrollWidth: root.scrollWidth, clientWidth: root.clientWidth, wide: wide,
          svg: svg ? {id: svg.id, box: box(svg.getBoundingClientRect())} : null,
          labels: svg ? Array.from(svg.querySelectorAll('text'))
            .map(t => ({text: t.textContent, box: box(t.getBoundingClientRect())})) : []};
})()"""


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config) -> Path:
    folder = Path(os.environ.get("FITCHECK_SCREENSHOTS") or tmp_path_factory.mktemp("shots"))
    folder.mkdir(parents=True, exist_ok=True)
    reporter = pytestconfig.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(f"report screenshots: {folder}")
    return folder


@pytest.fixture(scope="module")
def page() -> Iterator[Page]:
    assert BINARY is not None
    with browser(BINARY, free_port(), OFFLINE) as opened:
        yield opened


def _open(page: Page, shots: Path, case: str, width: int) -> None:
    html = shots / f"report-{case}.html"
    html.write_text(render_report(report_answer(case)))
    page.set_media("")
    page.set_viewport(width)
    page.open(html.as_uri())


def _overlaps(a: dict[str, float], b: dict[str, float]) -> bool:
    return (a["left"] < b["right"] - TOLERANCE and b["left"] < a["right"] - TOLERANCE
            and a["top"] < b["bottom"] - TOLERANCE and b["top"] < a["bottom"] - TOLERANCE)


def _check_fits(measured: dict[str, Any], where: str) -> None:
    assert measured["scrollWidth"] <= measured["clientWidth"], (where, measured["wide"])
    assert measured["svg"] is not None, where
    svg = measured["svg"]["box"]
    labels = measured["labels"]
    assert len(labels) >= 4, where
    for label in labels:
        box = label["box"]
        assert box["right"] > box["left"], (where, label)
        assert (box["left"] >= svg["left"] - TOLERANCE and box["right"] <= svg["right"] + TOLERANCE
                and box["top"] >= svg["top"] - TOLERANCE
                and box["bottom"] <= svg["bottom"] + TOLERANCE), (where, label, svg)
    for i, first in enumerate(labels):
        for second in labels[i + 1:]:
            assert not _overlaps(first["box"], second["box"]), (where, first, second)


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("case", list(CASES))
def test_report_fits_the_window(page: Page, shots: Path, case: str, width: int) -> None:
    _open(page, shots, case, width)
    measured = page.evaluate(MEASURE)
    page.screenshot(shots / f"report-{case}-{width}.png")
    print(f"{case} at {width}px: scrollWidth {measured['scrollWidth']} <= clientWidth "
          f"{measured['clientWidth']}")
    _check_fits(measured, f"{case} at {width}px")
    expected = "memory-chart" if width >= 640 else "memory-chart-narrow"
    assert measured["svg"]["id"] == expected
    assert page.errors == []
    assert page.evaluate("performance.getEntriesByType('resource').length") == 0
    assert all(url.startswith("file:") for url in page.requested_urls())


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("case", ["training", "does-not-fit"])
def test_report_prints_without_overflow(page: Page, shots: Path, case: str, width: int) -> None:
    _open(page, shots, case, width)
    page.set_media("print")
    try:
        measured = page.evaluate(MEASURE)
        page.screenshot(shots / f"report-{case}-{width}-print.png")
        assert measured["svg"]["id"] == "memory-chart"  # print draws the wide chart
        _check_fits(measured, f"{case} printed at {width}px")
        hidden = page.evaluate("Array.from(document.querySelectorAll('button.copy'))"
                               ".every(b => getComputedStyle(b).display === 'none')")
        assert hidden, "copy buttons do not print"
    finally:
        page.set_media("")


def test_copy_button_copies_the_block(page: Page, shots: Path) -> None:
    """Outside a secure context (a file, or http on an intranet host) the button selects the
    block's text and copies it with execCommand."""
    _open(page, shots, "serving", 1280)
    page.evaluate("document.querySelector('button.copy[data-copy=code-vllm]').click()")
    selected = page.evaluate("window.getSelection().toString()")
    assert selected.startswith("vllm serve Qwen/Qwen2.5-72B-Instruct \\\n  --tensor-parallel-size 8")
    said = page.evaluate("document.querySelector('button.copy[data-copy=code-vllm]').textContent")
    assert said in ("Copied", "Selected: press Ctrl+C")
    assert page.errors == []


def test_the_ticket_summary_copies_while_folded(page: Page, shots: Path) -> None:
    _open(page, shots, "does-not-fit", 390)
    page.evaluate("document.querySelector('button.copy[data-copy=ticket-text]').click()")
    selected = page.evaluate("window.getSelection().toString()")
    assert selected.startswith("fitcheck: Llama 3.1 70B") and "Report: http" in selected
    assert page.errors == []
