"""A text watch's ``include`` and ``ignore``: what the visible text leaves out,
compared as labelled lines, and what the user declares irrelevant, left out."""

from __future__ import annotations

import time
from typing import Any

import pytest

from changewatch.core.comparisons import CompareContext, Kind, load_comparisons
from changewatch.core.comparisons import content_part as content_module
from changewatch.core.comparisons.content_page import body_hash
from changewatch.core.observation import Observation
from changewatch.core.snapshot import Snapshot
from changewatch.core.text import options as text_options
from changewatch.core.text.normalise import normalise_text, visible_text
from changewatch.core.text.options import TextOptions, TextOptionsError
from changewatch.core.verdict import Verdict, observe

URL = "https://shop.example/products/kettle.html"
COMPARISONS = load_comparisons({"content": "changewatch.core.comparisons.content.ContentComparison"}, merge=False)
CONTEXT = CompareContext(threshold=None)

PAGE = """<html><head><title>Kettle 2000 | Shop</title>
<meta name="Description" content="A  kettle that boils.">
<meta property="og:title" content="Kettle 2000">
<meta property="og:description" content="Boils water fast">
<link rel="canonical" href="/products/kettle?utm_source=feed">
</head><body>
<div class="banner">Special: {banner}</div>
<main><h1>Kettle 2000</h1><p>Boils water in {minutes} minutes.</p>
<p>Visitors: {visitors}</p>
<p><a href="/downloads/Kettle-Manual-{version}.PDF">Manual</a> <a href="#reviews">Reviews</a>
<a href="javascript:void(0)">Share</a> <img src="img/kettle.png"> <a href="/cart?csrf_token={token}">Cart</a></p>
</main></body></html>"""


def page(**given: Any) -> str:
    values = {"banner": "free delivery", "minutes": 3, "visitors": 100, "version": "v1", "token": "a1b2"}
    return PAGE.format(**{**values, **given})


def options(**given: Any) -> TextOptions:
    parsed = TextOptions.of(given)
    assert parsed is not None
    return parsed


def observed(html: str | bytes, old: Snapshot | None = None, **opts: Any) -> Verdict:
    obs = Observation(key="k", url=URL, html=html, options=opts, encoding="utf-8" if isinstance(html, bytes) else None)
    return observe(obs, old, COMPARISONS, context=CONTEXT)


def baseline(html: str | bytes, **opts: Any) -> Snapshot:
    first = observed(html, **opts)
    assert first.kind is Kind.BASELINE and first.keep is not None
    return Snapshot.decode(first.keep.encode(COMPARISONS), COMPARISONS)


# -- what include adds --------------------------------------------------------------------------------

def test_title_and_meta_are_labelled_lines_before_the_text() -> None:
    lines = visible_text(page(), options=options(include=["title", "meta"]), url=URL).stable.split("\n")
    assert lines[:4] == ["[title] Kettle 2000 | Shop", "[meta description] A kettle that boils.",
                         "[meta og:title] Kettle 2000", "[meta og:description] Boils water fast"]
    assert lines[-1] == "[meta canonical] https://shop.example/products/kettle"  # absolute, tracking dropped
    assert "Kettle 2000" in lines[4:]  # the text itself is still there
    assert not any(line.startswith("[link]") for line in lines)


def test_links_are_absolute_targets_compared_as_a_set() -> None:
    stable = visible_text(page(), options=options(include="links"), url=URL).stable
    links = [line for line in stable.split("\n") if line.startswith("[link]")]
    assert links == ["[link] https://shop.example/cart",  # csrf_token dropped: it changes on every load
                     "[link] https://shop.example/downloads/Kettle-Manual-v1.PDF",  # case as written
                     "[link] https://shop.example/products/img/kettle.png"]
    # fragment-only and javascript: targets are not links to elsewhere
    assert "#reviews" not in stable and "javascript" not in stable
    # a set: order and duplicates do not matter
    shuffled = page().replace('<img src="img/kettle.png">', "").replace(
        "<main>", '<main><img src="img/kettle.png"><a href="/downloads/Kettle-Manual-v1.PDF#p2">again</a>')
    assert [line for line in visible_text(shuffled, options=options(include="links"), url=URL).stable.split("\n")
            if line.startswith("[link]")] == links


def test_links_join_with_the_base_href_and_keep_ports_and_case() -> None:
    html = ('<html><head><base href="http://127.0.0.1:8080/Files/"></head><body><p>Get it '
            '<a href=" App-1.2.10.ZIP ">here</a> <form action="search?q=1&sessionid=9"></form></p></body></html>')
    lines = visible_text(html, options=options(include=["links"]), url="http://127.0.0.1:8080/x").stable.split("\n")
    # compared as written: the volatile patterns would take "1:80" (a clock time) and "1.2.10" (a date)
    assert lines == ["Get it here", "[link] http://127.0.0.1:8080/Files/App-1.2.10.ZIP",
                     "[link] http://127.0.0.1:8080/Files/search?q=1"]


def test_links_are_taken_from_the_region_only() -> None:
    html = ('<html><body><nav><a href="/elsewhere">nav</a></nav>'
            '<article><p>Body <a href="/in">in</a></p></article></body></html>')
    stable = visible_text(html, "article", options=options(include="links"), url=URL).stable
    assert stable == "Body in\n[link] https://shop.example/in"


def test_a_change_only_in_the_title_is_seen_with_include_title_only() -> None:
    edited = page().replace("Kettle 2000 | Shop", "Kettle 3000 | Shop")
    assert observed(edited, baseline(page())).kind is Kind.NONE
    change = observed(edited, baseline(page(), include=["title"]), include=["title"])
    assert change.kind is Kind.CONTENT
    assert "- [title] Kettle 2000 | Shop" in change.members["diff"]
    assert "+ [title] Kettle 3000 | Shop" in change.members["diff"]


def test_a_download_link_s_new_target_is_a_content_change_showing_both_urls() -> None:
    old = baseline(page().encode(), include="links")
    change = observed(page(version="V2").encode(), old, include="links")
    assert change.kind is Kind.CONTENT
    diff = change.members["diff"]
    assert "- [link] https://shop.example/downloads/Kettle-Manual-v1.PDF" in diff
    assert "+ [link] https://shop.example/downloads/Kettle-Manual-V2.PDF" in diff
    # a link whose only difference is its token is not a change
    assert observed(page(token="zz99").encode(), old, include="links").kind is Kind.NONE


# -- what ignore takes out ------------------------------------------------------------------------------

def test_ignored_elements_are_removed_before_the_text_is_taken() -> None:
    html = '<html><body><p>Price <span class="ad">BUY NOW</span> 89.</p><div class="ad">Ad</div></body></html>'
    assert visible_text(html, options=options(ignore={"selectors": ".ad"}), url=URL).stable == "Price 89."
    # a selector matching nothing leaves the text alone
    assert visible_text(html, options=options(ignore={"selectors": ".none"}), url=URL).stable == \
        visible_text(html).stable


def test_ignored_elements_do_not_move_a_region() -> None:
    html = "<html><body><div class='x'>one</div><div class='x'>two</div></body></html>"
    # the region is selected from the page as served: ignoring the first div does not make the
    # second one the first
    got = visible_text(html, "div.x:first-child", options=options(ignore={"selectors": "div.x:first-child"}), url=URL)
    assert got.stable == ""


def test_ignored_lines_match_anywhere_and_case_sensitively() -> None:
    text = page(visitors=100)
    ignore = options(ignore={"text": [r"^Visitors: \d+"]})
    stable = visible_text(text, options=ignore, url=URL).stable
    assert "Visitors" not in stable and "Boils water in 3 minutes." in stable
    assert "Special: free delivery" not in visible_text(text, options=options(ignore={"text": "cial"}),
                                                           url=URL).stable
    assert "Special: free delivery" in visible_text(text, options=options(ignore={"text": "CIAL"}),
                                                       url=URL).stable
    assert "Special: free delivery" not in visible_text(text, options=options(ignore={"text": "(?i)CIAL"}),
                                                           url=URL).stable


def test_ignore_text_applies_to_included_lines_too() -> None:
    opts = options(include="links", ignore={"text": r"^\[link\] .*/cart"})
    stable = visible_text(page(), options=opts, url=URL).stable
    assert "[link] https://shop.example/products/img/kettle.png" in stable and "/cart" not in stable


def test_ignore_text_applies_to_text_a_spider_extracted() -> None:
    assert normalise_text("Kettle\nVisitors: 5\nBoils", options=options(ignore={"text": "^Visitors"})).stable == \
        "Kettle\nBoils"


def test_the_ignored_banner_and_line_are_silent_while_a_change_beside_them_is_reported() -> None:
    opts: dict[str, Any] = {"ignore": {"selectors": [".banner"], "text": [r"^Visitors: \d+"]}}
    old = baseline(page().encode(), **opts)
    assert observed(page(banner="10% off", visitors=101).encode(), old, **opts).kind is Kind.NONE
    change = observed(page(banner="20% off", visitors=102, minutes=5).encode(), old, **opts)
    assert change.kind is Kind.CONTENT
    diff = change.members["diff"].split("\n")
    assert [line for line in diff if line[0] in "+-"] == ["- Boils water in 3 minutes.", "+ Boils water in 5 minutes."]
    # without the option, the banner alone is a change
    assert observed(page(banner="10% off").encode(), baseline(page().encode())).kind is Kind.CONTENT


def test_a_catastrophic_pattern_is_an_error_within_its_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(text_options, "IGNORE_TEXT_BUDGET", 0.2)
    html = "<html><body><p>" + "x" * 3000 + "</p><p>more</p></body></html>"
    started = time.monotonic()
    verdict = observed(html.encode(), baseline(b"<html><body><p>before</p></body></html>"),
                       ignore={"text": ["(x+x+)+y"]})
    assert time.monotonic() - started < 5
    assert verdict.kind is Kind.ERROR and verdict.error is not None
    assert verdict.error.startswith("ignore.text: '(x+x+)+y' took more than 0.2 s")


# -- options given by a per-site spider are checked too ---------------------------------------------------

@pytest.mark.parametrize(("given", "error"), [
    ({"include": ["titel"]}, "include: unknown part 'titel'"),
    ({"include": 3}, "include: expected a string or a list of strings"),
    ({"ignore": ["x"]}, "ignore: expected a mapping"),
    ({"ignore": {"selectors": "p[[["}}, "ignore.selectors: invalid CSS selector 'p[[['"),
    ({"ignore": {"text": "x("}}, "ignore.text: invalid regular expression 'x('"),
    ({"ignore": {"text": "a*"}}, "ignore.text: 'a*' matches an empty line"),
])
def test_bad_options_are_an_error_observation(given: dict[str, Any], error: str) -> None:
    with pytest.raises(TextOptionsError, match="^" + error.replace("(", r"\(").replace("[", r"\[").replace("*", r"\*")):
        TextOptions.of(given)
    verdict = observed(page().encode(), baseline(page().encode()), **given)
    assert verdict.kind is Kind.ERROR and verdict.error is not None and verdict.error.startswith(error)


def test_no_options_read_the_page_as_before() -> None:
    assert TextOptions.of({"include": None, "ignore": None, "threshold": 3}) is None
    html = page().encode()
    # the body hash of a watch without the options is the one stored before they existed
    assert body_hash(html, "utf-8", False) == body_hash(html, "utf-8", False, "")
    assert body_hash(html, "utf-8", False) != body_hash(html, "utf-8", False, options(include="title").key(URL))


# -- the body-hash shortcut ------------------------------------------------------------------------------

def test_the_body_hash_shortcut_does_not_hide_an_options_change(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[object] = []
    real = content_module.visible_text
    monkeypatch.setattr(content_module, "visible_text", lambda *a, **k: parsed.append(k) or real(*a, **k))
    html = page().encode()
    old = baseline(html)
    assert observed(html, old).kind is Kind.NONE and len(parsed) == 1  # the baseline was read, this not
    # the same bytes with other options: read again, with them (here: a title now compared), and
    # kept as the new baseline, silently (an edited watch re-baselines its text)
    with_title = observed(html, old, include="title")
    assert len(parsed) == 2 and with_title.kind is Kind.NONE and with_title.keep is not None
    kept = Snapshot.decode(with_title.keep.encode(COMPARISONS), COMPARISONS)
    assert kept.part("content").text.startswith("[title] Kettle 2000 | Shop\n")
    # with them stored, the same bytes are not read again; other ignore patterns are
    assert observed(html, kept, include="title").kind is Kind.NONE and len(parsed) == 2
    observed(html, kept, include="title", ignore={"text": "^Visitors"})
    assert len(parsed) == 3
    # and the next title change is reported
    edited = observed(html.replace(b"| Shop", b"| Sale"), kept, include="title")
    assert edited.kind is Kind.CONTENT and "+ [title] Kettle 2000 | Sale" in edited.members["diff"]
    # links are joined with the page's URL: another URL, another reading
    links = baseline(html, include="links")
    moved = observe(Observation(key="k", url="https://mirror.example/kettle.html", html=html, encoding="utf-8",
                                options={"include": "links"}), links, COMPARISONS, context=CONTEXT)
    assert moved.kind is Kind.CONTENT and "+ [link] https://mirror.example/cart" in moved.members["diff"]


def test_a_region_without_text_is_an_error_even_with_a_title_included() -> None:
    html = page().encode()
    old = observed(html, None, include="title")
    assert old.keep is not None
    obs = Observation(key="k", url=URL, html=html, region="section.gone", options={"include": "title"},
                      encoding="utf-8")
    verdict = observe(obs, old.keep, COMPARISONS, context=CONTEXT)
    assert verdict.kind is Kind.ERROR and verdict.error == "extraction: region 'section.gone' matched nothing"
