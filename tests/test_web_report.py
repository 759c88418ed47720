"""The report's HTML: one verdict with its error band, one bar per distinct layout on a scale the
plan can be read on, words instead of Python literals and field names, the fix and the next two
with their costs and links, the software, the launch configs as copyable blocks, a print
stylesheet, and nothing loaded from anywhere."""

from __future__ import annotations

import re
from dataclasses import replace
from html import unescape
from urllib.parse import parse_qs, urlsplit

import pytest
from report_cases import CASES, plain_answer, report_answer

from service.answers import compute_answer
from service.core.job.request import EstimateRequest
from service.core.report.answer_types import Answer
from service.permalink import normalise
from service.web.advice import changed_link
from service.web.chart_bars import chart_bars, scale_top
from service.web.report import render_report

RAW_NAMES = ("zero_stage", "micro_batch", "grad_accum", "sequence_parallel", "kv_cache_dtype",
             "max_concurrent_sequences", "gpu_count", "global_batch", "offload='")


def _section(html: str, marker: str, end: str) -> str:
    start = html.index(marker)
    return html[start:html.index(end, start)]


def _text(html: str) -> str:
    """What a person reads: tags dropped, runs of spaces as one."""
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", "", html)))


def _read_first(html: str) -> str:
    """The headline, the fixes, the chart and the layout table: the part read in 5 seconds."""
    parts = [_section(html, "<section class='verdict", "</section>"),
             _section(html, "<div class='card chart'>", "</div>"),
             _section(html, "<table id=layout>", "</table>")]
    if "<ol class=fixes" in html:
        parts.append(_section(html, "<ol class=fixes", "</ol>"))
    return " | ".join(_text(p) for p in parts)


def _answer(**stated: object) -> Answer:
    return compute_answer(normalise(EstimateRequest(**stated)), fits_on=False).answer  # type: ignore[arg-type]


@pytest.mark.parametrize("case", list(CASES))
def test_one_headline_in_words(case: str) -> None:
    answer = report_answer(case)
    html = render_report(answer)
    assert html.count("class=headline") == 1
    headline = _section(html, "<section class='verdict", "</section>")
    assert unescape(re.search(r"id=verdict>(.*?)</p>", headline).group(1)) == answer.verdict  # type: ignore[union-attr]
    band = answer.error_band
    assert f"{band.low_bytes / 1e9:,.1f} GB – {band.high_bytes / 1e9:,.1f} GB" in _text(headline)
    shown = _read_first(html)
    for literal in ("True", "False", "None"):
        assert not re.search(rf"\b{literal}\b", shown), literal
    for name in RAW_NAMES:
        assert name not in shown, name
    assert "<script src" not in html and "src=" not in html
    assert re.findall(r"<link [^>]*>", html) == ["<link rel=icon href='data:,'>"]
    assert "@media print" in html


def test_the_band_and_its_verdict_read_as_words() -> None:
    html = render_report(report_answer("training"))
    headline = _text(_section(html, "<section class='verdict", "</section>"))
    assert "Likely peak:" in headline and "against 42.3 GB usable" in headline
    assert "fits" in headline and "Plan for DeepSpeed" in headline
    assert "class='verdict fits'" in html


def test_one_bar_when_the_planner_keeps_the_stated_layout() -> None:
    kept = _answer(model="llama-3-8b", task="finetune", lora_rank=16, gpu="a100-80gb",
                   gpu_count=1)
    assert kept.planner is not None and kept.planner.layout is not None
    # no layout stated: the top level is the planner's layout, the defaults under as_stated
    assert kept.planner.layout.plan == kept.plan and kept.as_stated is not None
    assert kept.as_stated.plan != kept.plan  # only in what the planner fills in
    bars = chart_bars(kept)
    assert [b.name for b in bars] == ["Plan on 1 GPU"]
    html = render_report(kept)
    chart = _section(html, "<svg id=memory-chart ", "</svg>")
    assert chart.count("class='label name'") == 1
    assert _section(html, "<table id=layout>", "</table>").count("<th>Plan on 1 GPU</th>") == 1


def test_the_plan_stays_readable_beside_a_huge_stated_bar() -> None:
    answer = report_answer("serving")
    bars = chart_bars(answer)
    assert [b.name for b in bars] == ["Plan: 24 GPUs", "Default layout: 1 GPU"]  # none stated
    top = scale_top(bars, answer.gpu_usable_bytes)
    assert answer.gpu_usable_bytes is not None and bars[0].total < top < bars[1].total
    assert bars[0].total / top > 0.5  # the plan fills most of the scale, not a sliver
    html = render_report(answer)
    assert "off the scale (bar cut)" in html and "class=cut" in html
    assert "bar is cut at the scale's end: it needs 387.1 GB per GPU" in unescape(html)


def test_layout_table_speaks_words() -> None:
    html = render_report(report_answer("does-not-fit"))
    table = _text(_section(html, "<table id=layout>", "</table>"))
    for words in ("ZeRO stage", "3 (all model states)", "off (plain data parallel)",
                  "sequence parallel", "on", "off", "activation recompute", "full (every layer)"):
        assert words in table, words
    assert "the fewest NVIDIA A100 40GB SXM that fit this job: 32 (this report is for 8)" in \
        _text(html)


def test_the_fix_and_the_next_two_with_their_costs_and_links() -> None:
    answer = report_answer("does-not-fit")
    planner = answer.planner
    assert planner is not None and planner.fix is not None and len(planner.other_fixes) >= 2
    html = render_report(answer)
    fixes = _section(html, "<ol class=fixes", "</ol>")
    assert fixes.count("<li class=fix>") == 3
    for fix in [planner.fix, *planner.other_fixes[:2]]:
        assert fix.change in unescape(fixes) and f"Cost: {fix.note}" in unescape(fixes)
    links = [unescape(h) for h in re.findall(r"href='([^']+)'", fixes)]
    assert len(links) == 3
    first = parse_qs(urlsplit(links[0]).query)
    assert first["offload"] == ["optimizer_and_params"] and first["model"] == ["llama-3.1-70b"]
    # more A100s (8-bit AdamW runs data-parallel only, on the Trainer: no fewer GPUs), then the
    # team's larger A100s
    second = parse_qs(urlsplit(links[1]).query)
    assert second["gpu_count"] == ["32"] and "optimizer" not in second
    third = parse_qs(urlsplit(links[2]).query)
    assert third["gpu"] == ["a100-80gb"] and third["gpu_count"] == ["16"]
    assert changed_link(None, {"gpu_count": 2}) is None
    assert changed_link("http://h/v1/estimate?model=x&tokens=1e12", {"flash_attn": False,
                                                                    "tokens": 2e12}) == \
        "/v1/estimate?model=x&tokens=2e12&flash_attn=false"


def test_launch_configs_are_copyable_blocks() -> None:
    answer = report_answer("training")
    html = render_report(answer)
    for tool, config in answer.launch.items():
        block = _section(html, f"id=launch-{tool}", "</section>")
        code = re.search(r"<code id=(code-[a-z0-9-]+)>(.*?)</code>", block, re.S)
        assert code is not None and unescape(code.group(2)) == config.text
        assert f"data-copy='{code.group(1)}'" in block
        assert config.title in block
        for note in config.notes:
            assert note in unescape(block)
    assert "save as <code>ds_config.json</code>" in html and "run as a command" in html
    # a file's config also carries the line that uses it, copyable on its own
    run = re.search(r"<code id=(code-accelerate-run)>(.*?)</code>", html, re.S)
    assert run is not None and unescape(run.group(2)) == answer.launch["accelerate"].command
    assert "data-copy='code-accelerate-run'" in html
    assert "navigator.clipboard" in html and "execCommand('copy')" in html
    assert "Launch configs" not in render_report(plain_answer("catalog"))


def test_launch_text_is_escaped() -> None:
    answer = replace(report_answer("serving"), launch={
        "vllm": replace(report_answer("serving").launch["vllm"], text="echo '<b>&</b>'")})
    html = render_report(answer)
    assert "echo &#x27;&lt;b&gt;&amp;&lt;/b&gt;&#x27;" in html


def test_catalog_report_has_no_capacity_line() -> None:
    html = render_report(report_answer("catalog"))
    assert "No GPU given: no usable-memory line." in html
    assert "class=capacity" not in html
    assert html.index("id=fits-on") < html.index("id=components")


def test_ticket_text_carries_the_verdict_and_the_link() -> None:
    answer = report_answer("does-not-fit")
    html = render_report(answer)
    text = unescape(_section(html, "<code id=ticket-text>", "</code>"))
    assert answer.verdict in text and f"Report: {answer.link}" in text
    assert "Fix: optimizer and parameter offload" in text and text.count("\nOr: ") == 2


def test_components_follow_the_verdict() -> None:
    answer = report_answer("does-not-fit")
    assert answer.planner is not None and answer.planner.layout is not None
    html = render_report(answer)
    table = _section(html, "<table id=components", "</table>")
    total = answer.planner.layout.per_gpu_bytes.total
    assert f"{total / 1e9:,.1f} GB" in _section(table, "<th>Total</th>", "</tr>")
    assert "Of the planner's layout on 8 GPUs" in html
