"""The meta refresh that reads only a page's head: Scrapy's answer on every page, the
whole body decoded only when the page declares no encoding, and in Scrapy's place in the chain."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from scrapy.http import HtmlResponse, Request
from scrapy.utils.response import get_meta_refresh
from scrapy.utils.test import get_crawler

from changewatch.middlewares.metarefresh import MetaRefreshMiddleware, head_meta_refresh

from ..core._support import corpus_files
from ._support import UnitSpider, downloader_middlewares

URL = "https://s.example/dir/page.html"
SCRAPY_MW = "scrapy.downloadermiddlewares.redirect.MetaRefreshMiddleware"
OURS = "changewatch.middlewares.MetaRefreshMiddleware"
REFRESH = '<meta http-equiv="refresh" content="5; url=/moved/é?a=1">'
FILLER = "<p>Ünïcödé text, 😀 and more text.</p>\n" * 2000  # ~80 KB, multibyte in most encodings


def response(body: bytes, content_type: str = "text/html", url: str = URL) -> HtmlResponse:
    return HtmlResponse(url, body=body, headers={"Content-Type": content_type})


def both(body: bytes, content_type: str = "text/html") -> tuple[Any, Any]:
    """(ours, Scrapy's) on two fresh responses of the same bytes: Scrapy's caches per response."""
    return head_meta_refresh(response(body, content_type)), get_meta_refresh(response(body, content_type))


@pytest.fixture
def text_forbidden(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    def refuse(self: HtmlResponse) -> str:
        raise AssertionError("the whole body was decoded")
    monkeypatch.setattr(HtmlResponse, "text", property(refuse))
    yield


@pytest.mark.parametrize("content_type", ["text/html", "text/html; charset=utf-8", "text/html; charset=iso-8859-1",
                                          "text/html; charset=windows-1251"])
def test_every_corpus_page_gets_scrapys_answer(content_type: str) -> None:
    pages = corpus_files()
    found = 0
    for path in pages:
        body = path.read_bytes()
        ours, scrapys = both(body, content_type)
        assert ours == scrapys, path.name
        found += scrapys != (None, None)
        # and the same page with a refresh where Scrapy looks: near the start of its <head>
        at = body.find(b"<head")
        if at >= 0:
            edited = body[:at] + b"<head>" + REFRESH.encode() + body[at + 5:]
            ours, scrapys = both(edited, content_type)
            assert ours == scrapys, path.name
            found += scrapys != (None, None)
    assert found >= len(pages) // 2  # the edited pages do refresh: the comparison compared something


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-16-le", "utf-32", "gb18030", "shift_jis", "iso-2022-jp",
                                      "utf-7", "cp1252", "koi8-r"])
@pytest.mark.parametrize("where", ["start", "before 4096", "across 4096", "after 4096"])
def test_encodings_and_the_4096th_character(encoding: str, where: str) -> None:
    """The refresh at the start, straddling Scrapy's 4,096-character cut, or past it; the page
    long, declared by a <meta charset> (stateful and four-byte encodings included)."""
    head = f'<html><head><meta charset="{encoding}"><title>t</title>'
    if where == "start":
        text = head + REFRESH + FILLER
    else:
        # the refresh's last character at 4,090, its middle at 4,096, or its first past it
        pad = 4096 - len(head) - {"before 4096": len(REFRESH) + 6, "across 4096": len(REFRESH) // 2,
                                  "after 4096": -10}[where]
        text = head + "é" * pad + REFRESH + FILLER
    body = text.encode(encoding, "replace")
    ours, scrapys = both(body)
    assert ours == scrapys
    unreadable = ("utf-16-le",) if where == "start" else ("utf-16-le", "utf-7")
    if where in ("start", "before 4096") and encoding not in unreadable:
        # (UTF-16 without a BOM: its <meta> is unreadable; w3lib reads no UTF-7 declaration past the é's)
        assert scrapys[1] is not None and scrapys[1].startswith("https://s.example/moved/")  # é: as encodable


def test_a_head_too_short_for_4096_characters_is_not_trusted(monkeypatch: pytest.MonkeyPatch) -> None:
    """32 KB always hold 4,096 characters of the encodings Scrapy meets; were they not (a smaller
    head here), the whole body is decoded rather than a refresh missed."""
    monkeypatch.setattr("changewatch.middlewares.metarefresh._HEAD", 6000)
    text = '<html><head><meta charset="utf-8">' + "é" * 3500 + REFRESH + FILLER  # é: 2 bytes
    ours, scrapys = both(text.encode())
    assert ours == scrapys and scrapys[1] is not None


def test_a_bom_wins_as_in_scrapy() -> None:
    body = "\ufeff".encode("utf-16-le") + ('<meta charset="iso-8859-1">' + REFRESH + FILLER).encode("utf-16-le")
    ours, scrapys = both(body)
    assert ours == scrapys  # a query encoded as UTF-16 (%00 and all): Scrapy's answer, kept
    assert scrapys[1] is not None and scrapys[1].startswith("https://s.example/moved/%C3%A9?a")


def test_a_declared_long_page_is_not_decoded_whole(text_forbidden: None) -> None:
    body = ('<meta charset="utf-8">' + REFRESH + FILLER).encode()
    assert head_meta_refresh(response(body)) == (5.0, "https://s.example/moved/%C3%A9?a=1")
    assert head_meta_refresh(response(FILLER.encode(), "text/html; charset=utf-8")) == (None, None)


def test_an_undeclared_page_is_left_to_scrapy(text_forbidden: None) -> None:
    """Scrapy infers an undeclared page's encoding from all of it: so does this, through Scrapy."""
    with pytest.raises(AssertionError, match="decoded"):
        head_meta_refresh(response((REFRESH + FILLER).encode()))


def test_a_base_href_in_the_head_is_honoured() -> None:
    body = ('<meta charset="utf-8"><base href="https://other.example/base/">'
            '<meta http-equiv="refresh" content="0;url=next">' + FILLER).encode()
    assert head_meta_refresh(response(body)) == (0.0, "https://other.example/base/next") == get_meta_refresh(
        response(body))


def test_the_addon_puts_it_in_scrapys_place() -> None:
    enabled = downloader_middlewares({})
    assert OURS in enabled and SCRAPY_MW not in enabled
    # 580, Scrapy's: after Retry (550) and the SSRF guard (560), before Redirect (600)
    assert (enabled.index("scrapy.downloadermiddlewares.retry.RetryMiddleware")
            < enabled.index("changewatch.guard.SSRFGuardMiddleware") < enabled.index(OURS)
            < enabled.index("changewatch.middlewares.RedirectMiddleware"))
    crawler = get_crawler(UnitSpider, {"ADDONS": {"changewatch.Addon": 0}})
    assert crawler.settings.getwithbase("DOWNLOADER_MIDDLEWARES")[OURS] == 580


@pytest.mark.parametrize("priority", [None, 590])
def test_a_project_that_names_scrapys_keeps_its_choice(priority: int | None) -> None:
    enabled = downloader_middlewares({"DOWNLOADER_MIDDLEWARES": {SCRAPY_MW: priority}})
    assert OURS not in enabled
    assert (SCRAPY_MW in enabled) == (priority is not None)


def crawler_middleware(settings: dict[str, Any] | None = None) -> MetaRefreshMiddleware:
    crawler = get_crawler(UnitSpider, {"ADDONS": {"changewatch.Addon": 0}, **(settings or {})})
    crawler.spider = crawler._create_spider()
    return MetaRefreshMiddleware.from_crawler(crawler)


def test_a_meta_refresh_loop_it_ends_is_noted_as_why_the_request_failed() -> None:
    """Past REDIRECT_MAX_TIMES it raises IgnoreRequest as Scrapy's does, from process_response,
    where no downloader middleware's process_exception sees it: the crawl's FetchOutcomes is told."""
    from scrapy.exceptions import IgnoreRequest

    from changewatch.runtime.services import CrawlServices

    mw = crawler_middleware({"METAREFRESH_MAXDELAY": 10, "REDIRECT_MAX_TIMES": 3})
    body = ('<meta charset="utf-8">' + REFRESH + FILLER).encode()
    looping = Request(URL, meta={"redirect_times": 3, "redirect_ttl": 17})
    with pytest.raises(IgnoreRequest):
        mw.process_response(looping, response(body))
    assert CrawlServices.of(mw.crawler).fetches.nothing_reached() == (
        "all 1 request(s) failed, none reached the spider: redirect: more than 3 redirections (REDIRECT_MAX_TIMES) "
        "(1 request)")


def test_it_redirects_as_scrapys_does() -> None:
    mw = crawler_middleware({"METAREFRESH_MAXDELAY": 10})
    body = ('<meta charset="utf-8">' + REFRESH + FILLER).encode()
    redirected = mw.process_response(Request(URL), response(body))
    assert isinstance(redirected, Request) and redirected.url == "https://s.example/moved/%C3%A9?a=1"
    assert mw.process_response(Request(URL, meta={"dont_redirect": True}), response(body)).url == URL
    slow = crawler_middleware({"METAREFRESH_MAXDELAY": 2})  # the refresh waits 5 s: not followed
    assert isinstance(slow.process_response(Request(URL), response(body)), HtmlResponse)


def test_metarefresh_enabled_false_turns_it_off() -> None:
    from scrapy.exceptions import NotConfigured
    with pytest.raises(NotConfigured):
        crawler_middleware({"METAREFRESH_ENABLED": False})


def test_scannable_encodings_take_at_most_8_bytes_a_character() -> None:
    """The encodings whose bytes are searched for a refresh: each ASCII character its own byte and
    nothing written between two of them (w3lib's test), and the first 4,096 characters within the
    bytes searched (_REFRESH_SCAN)."""
    import codecs

    import w3lib.html

    from changewatch.middlewares.metarefresh import _CHARS, _REFRESH_SCAN, _SCANNABLE, _scannable

    chars = "".join(map(chr, [*range(0x20, 0x2000, 7), *range(0x3000, 0xD800, 97), *range(0xE000, 0x10FFFF, 4099)]))
    w3lib_scannable = getattr(w3lib.html, "_scannable", None)  # w3lib >= 2.5: its own test agrees
    for name in _SCANNABLE:
        assert codecs.lookup(name).name == name, name
        assert w3lib_scannable is None or w3lib_scannable(name), name
        for char in chars:
            try:
                encoded = char.encode(name)
            except (UnicodeError, ValueError):
                continue
            assert len(encoded) * _CHARS <= _REFRESH_SCAN, (name, char)
    assert all(map(_scannable, ("UTF-8", "windows-1252", "Shift_JIS", "euc-kr", "iso-8859-15", "gb18030")))
    assert not any(map(_scannable, ("iso-2022-jp", "utf-7", "utf-16", "unicode_escape", "raw_unicode_escape",
                                    "cp037", "no-such-encoding")))


def test_a_short_declared_page_without_refresh_is_not_decoded(text_forbidden: None) -> None:
    small = "<p>Short page.</p>\n" * 500  # ~10 KB: all of it is searched
    assert head_meta_refresh(response(small.encode(), "text/html; charset=utf-8")) == (None, None)
    assert head_meta_refresh(response(('<meta charset="utf-8">' + small).encode())) == (None, None)
