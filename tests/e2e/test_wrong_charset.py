"""End to end: windows-1252 bytes served as ``charset=utf-8``. ``5 €`` became
``5 £``: both bytes are invalid UTF-8, and both used to read as U+FFFD, so the change was lost.
Each undecodable byte is now a character of its own, for a page compared by its text (decoded in
the worker) and for one read by a selector (decoded in the crawl), and the stat says the page
needed it."""

from __future__ import annotations

from pathlib import Path

from tests.changes import field

from .crawl import Crawler, by_key
from .hostile import HostileSite, page

STAT = "changewatch/charset/undecodable_pages"
BODY = ("<html><body><h1>Kettle 2000</h1><p class=price>Price: 5 {price}</p>"
        "<p>Boils a litre in two minutes.</p></body></html>")


def serve(site: HostileSite, price: str) -> None:
    body = BODY.format(price=price).encode("cp1252")  # what the server sends, labelled UTF-8 below
    assert b"\xef\xbf\xbd" not in body
    for path in ("/text", "/field", "/steady"):
        site.good[path] = page(body if path != "/steady" else BODY.format(price="€").encode("cp1252"),
                               ctype="text/html; charset=utf-8")


def test_a_change_between_two_undecodable_bytes_is_reported(site: HostileSite, tmp_path: Path) -> None:
    crawler = Crawler(tmp_path, [{"key": "text", "url": f"{site.base}/text"},
                                 {"key": "field", "url": f"{site.base}/field", "fields": {"price": "p.price::text"}},
                                 {"key": "steady", "url": f"{site.base}/steady"}])
    serve(site, "€")
    first = crawler.run()
    assert first.returncode == 0 and first.records == [], first.stderr[-3000:]
    assert first.stats.get(STAT) == 3, first.stats  # two pages read in the worker, one in the crawl

    serve(site, "£")
    second = crawler.run()
    assert second.returncode == 0, second.stderr[-3000:]
    records = by_key(second.records)
    assert set(records) == {"text", "field"}, second.records
    assert records["text"]["kind"] == "content"
    assert "- Price: 5 \\x80" in records["text"]["diff"] and "+ Price: 5 \\xa3" in records["text"]["diff"]
    assert records["field"]["kind"] == "field"
    assert records["field"]["changes"]["price"] == field("Price: 5 \\x80", "Price: 5 \\xa3")
    assert second.stats.get(STAT) == 3, second.stats  # the steady page was not read again: it says so still

    third = crawler.run()
    assert third.returncode == 0 and third.records == [], third.stderr[-3000:]
