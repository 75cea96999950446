"""End to end, on SQLite and on PostgreSQL: a long first page is kept unread (as its body) by a
real crawl, stays quiet while it comes back, is compared as any page once it changes, and a first
page kept unread that turns out a block page never becomes a change."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from changewatch.demo.site import DemoSite

from ..core._support import article_html, prose_paragraphs
from ..store.conftest import store_uri_of
from .crawl import Crawler


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    yield from store_uri_of(request.param, tmp_path)


def _page(token: str, edit: str = "") -> bytes:
    paragraphs = prose_paragraphs(3000)
    html = article_html(["Updated 10:32", *paragraphs[:10], edit, *paragraphs[10:]])
    return html.replace("</body>", f"<script>var csrf = '{token}';</script></body>").encode()


def _volatile_block_page() -> bytes:
    letters = "abcdefghijklmnopqrstuvwxyzabcdefghijkl"
    tokens = "".join(f"<p>session_token={letters}{'xyz' * (i % 5)}</p>" for i in range(300))
    return f"<html><body><h1>Access denied</h1>{tokens}</body></html>".encode()


def _serve(site: DemoSite, body: bytes) -> None:
    site.overrides["/long"] = (200, "text/html; charset=utf-8", body)


def test_a_long_first_page_kept_unread_through_real_crawls(tmp_path: Path, demo_site: tuple[DemoSite, str],
                                                           store: str) -> None:
    site, base = demo_site
    crawler = Crawler(tmp_path, [{"key": "long", "url": f"{base}/long"}], store=store)
    _serve(site, _page("a1"))
    first = crawler.run()
    assert first.returncode == 0 and first.records == [], first.stderr[-2000:]
    assert first.stats.get("changewatch/content/kept_unread") == 1
    assert crawler.run().records == []  # the same bytes: not read
    _serve(site, _page("b2"))
    noise = crawler.run()  # other bytes, the same text: the stored body is read, nothing reported
    assert noise.returncode == 0 and noise.records == [], noise.stderr[-2000:]
    _serve(site, _page("c3", "A Sentence, added to the TERMS."))
    edited = crawler.run()
    assert edited.returncode == 0
    [record] = edited.records
    assert record["kind"] == "content" and "+ A Sentence, added to the TERMS." in record["diff"]


def test_a_block_page_kept_unread_is_replaced_by_the_next_good_page(tmp_path: Path, demo_site: tuple[DemoSite, str],
                                                                    store: str) -> None:
    site, base = demo_site
    crawler = Crawler(tmp_path, [{"key": "long", "url": f"{base}/long"}], store=store)
    _serve(site, _volatile_block_page())
    first = crawler.run()
    assert first.returncode == 0 and first.records == [], first.stderr[-2000:]
    assert first.stats.get("changewatch/content/kept_unread") == 1
    _serve(site, _page("a1"))
    good = crawler.run()  # not a change from "Access denied" to the page
    assert good.returncode == 0 and good.records == [], good.stderr[-2000:]
    assert good.stats.get("changewatch/content/unread_baseline_replaced") == 1
    _serve(site, _page("b2", "An edit after the block."))
    [record] = crawler.run().records
    assert record["kind"] == "content" and "+ An edit after the block." in record["diff"]
