"""A per-site spider's ``Page.observe(..., options={"include": ..., "ignore": ...})``: the same
options as a watchlist's, read by the content comparison the same way."""

from __future__ import annotations

from typing import Any

from scrapy.http import HtmlResponse

from changewatch import Page
from changewatch.core.comparisons import Kind, load_comparisons
from changewatch.core.verdict import Verdict, observe
from changewatch.items import Observation

COMPARISONS = load_comparisons()
HTML = ("<html><head><title>{title}</title></head><body><div class='banner'>{banner}</div>"
        "<main><p>Kettle 2000</p><p><a href='/dl/manual-{version}.pdf'>Manual</a></p></main></body></html>")


def observed(options: dict[str, Any], **values: str) -> Observation:
    body = HTML.format(**{"title": "Shop", "banner": "Sale", "version": "1", **values}).encode()
    response = HtmlResponse(url="https://shop.example/kettle", body=body, encoding="utf-8")
    return Page(response).observe("kettle", text=True, options=options)


def compared(options: dict[str, Any], **values: str) -> Verdict:
    first = observe(observed(options), None, COMPARISONS)
    assert first.kind is Kind.BASELINE and first.keep is not None
    return observe(observed(options, **values), first.keep, COMPARISONS)


def test_a_spider_s_options_reach_the_text_comparison() -> None:
    options = {"include": ["title", "links"], "ignore": {"selectors": [".banner"]}}
    obs = observed(options)
    assert obs.options["include"] == ["title", "links"] and obs.html is not None
    assert compared(options, banner="Other").kind is Kind.NONE
    assert compared({}, banner="Other").kind is Kind.CONTENT
    title = compared(options, title="Shop!")
    assert title.kind is Kind.CONTENT and "+ [title] Shop!" in title.members["diff"]
    link = compared(options, version="2")
    assert "+ [link] https://shop.example/dl/manual-2.pdf" in link.members["diff"]


def test_a_spider_s_bad_options_are_an_error_observation() -> None:
    verdict = observe(observed({"include": "titles"}), None, COMPARISONS)  # never a baseline
    assert verdict.kind is Kind.ERROR and verdict.error is not None
    assert verdict.error.startswith("include: unknown part 'titles'")
