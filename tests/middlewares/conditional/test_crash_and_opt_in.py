"""Validators and crashes, spiders that ask to see their 304s, and HttpCacheMiddleware."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.changes import field

from ...e2e.crawl import Crawler, by_key
from .servers import OddServer, Page
from .test_odd_servers import html, setup

pytestmark = pytest.mark.slow  # crawl subprocesses

TEST_SPIDERS = ("-s", "SPIDER_MODULES=changewatch.spiders,tests.middlewares.conditional.helpers")


def test_a_kill_between_download_and_commit_means_a_full_fetch_next_time(odd_server: tuple[OddServer, str],
                                                                          tmp_path: Path) -> None:
    server, base = odd_server
    setup(server, {"/p": Page(html("price 10"), etag='"v1"'), "/q": Page(html("other"), etag='"q"')})
    crawler = Crawler(tmp_path, [{"url": base + "/p", "key": "p"}, {"url": base + "/q", "key": "q"}])
    assert crawler.run().returncode == 0
    server.pages["/p"] = Page(html("price 12"), etag='"v2"')
    killed = crawler.run("-s", "TESTS_KILL_KEY=p",
                         "-s", 'ITEM_PIPELINES={"tests.middlewares.conditional.helpers.KillOnKey": 780}')
    assert killed.returncode == -9
    assert server.sent("/p")[-1] == ('"v1"', None, 200)  # the new page was downloaded, never committed
    before = len(server.sent("/p"))
    after = crawler.run()
    assert after.returncode == 0, after.stderr
    # still the old validators: a full fetch; then the load that confirms the change, with none
    assert server.sent("/p")[before:] == [('"v1"', None, 200), (None, None, 200)]
    records = by_key(after.records)
    assert set(records) == {"p"} and "+ price 12" in records["p"]["diff"]
    assert crawler.run().stats["changewatch/conditional/not_modified"] == 2


def listing(items: list[str]) -> bytes:
    links = "".join(f'<li><a class="item" href="/item/{i}">{i}</a></li>' for i in items)
    return f"<html><body><ul>{links}</ul></body></html>".encode()


def test_a_spider_that_asks_for_304s_revisits_the_children_of_an_unchanged_listing(
        odd_server: tuple[OddServer, str], tmp_path: Path) -> None:
    server, base = odd_server
    setup(server, {"/listing": Page(listing(["a", "b", "c"]), etag='"l1"')})
    for i, price in (("a", "5"), ("b", "6"), ("c", "7")):
        server.pages[f"/item/{i}"] = Page(f"<html><body><b>{price}</b></body></html>".encode(), etag=f'"{i}{price}"')
    crawler = Crawler(tmp_path, None, spider="cw_test_listing")
    run = ("-a", f"base={base}", *TEST_SPIDERS)
    first = crawler.run(*run)
    assert first.returncode == 0, first.stderr
    assert first.stats["changewatch/commit/baseline"] == 4
    server.pages["/item/b"] = Page(b"<html><body><b>4</b></body></html>", etag='"b4"')
    second = crawler.run(*run)
    assert second.returncode == 0, second.stderr
    assert server.sent("/listing")[-1] == ('"l1"', None, 304)
    records = by_key(second.records)
    assert set(records) == {f"{base}/item/b"}
    assert records[f"{base}/item/b"]["changes"] == {"price": field("6", "4")}
    assert second.stats["changewatch/conditional/not_modified"] == 3  # the listing, items a and c
    assert second.stats["changewatch/commit/none"] == 3  # the unchanged listing was recorded too


@pytest.mark.parametrize("cache_control", ["max-age=0", "no-cache"])
def test_httpcache_rfc2616_and_changewatch_never_both_validate(odd_server: tuple[OddServer, str], tmp_path: Path,
                                                               cache_control: str) -> None:
    """A stale cache entry (max-age=0) is revalidated by the cache with its own validators, and
    changewatch steps aside; for no-cache, Scrapy's policy refetches without validators, and
    changewatch validates instead. Either way one set of validators per request."""
    server, base = odd_server
    headers = {"Cache-Control": cache_control}
    setup(server, {"/c": Page(html("cached one"), etag='"c1"', extra_headers=headers)})
    crawler = Crawler(tmp_path, [{"url": base + "/c", "key": "c"}])
    cache = ("-s", "HTTPCACHE_ENABLED=True", "-s", "HTTPCACHE_POLICY=scrapy.extensions.httpcache.RFC2616Policy",
             "-s", f"HTTPCACHE_DIR={tmp_path / 'cache'}")
    assert crawler.run(*cache).returncode == 0
    second = crawler.run(*cache)
    assert second.returncode == 0 and second.records == []
    assert server.sent("/c")[-1] == ('"c1"', None, 304)
    if cache_control == "max-age=0":
        assert second.stats["changewatch/conditional/foreign_validators"] == 1
        assert "changewatch/conditional/sent" not in second.stats
        assert second.stats["httpcache/revalidate"] == 1
    else:
        assert second.stats["changewatch/conditional/sent"] == 1
        assert second.stats["changewatch/conditional/not_modified"] == 1
    server.pages["/c"] = Page(html("cached two"), etag='"c2"', extra_headers=headers)
    third = crawler.run(*cache)
    assert [r["kind"] for r in third.records] == ["content"]
    assert "+ cached two is the substance of this page" in third.records[0]["diff"]
    assert crawler.run(*cache).records == []  # and the new page is the cache's and the store's baseline


def keys_page(keys: list[str]) -> bytes:
    items = "".join(f'<li class="k" data-key="{k}" data-v="{k.upper()}">{k}</li>' for k in keys)
    return f"<html><body><ul>{items}</ul></body></html>".encode()


@pytest.mark.parametrize("spider", ["cw_test_keys", "cw_test_keys_404"])
def test_a_page_of_several_keys_with_cb_kwargs(odd_server: tuple[OddServer, str], tmp_path: Path,
                                               spider: str) -> None:
    server, base = odd_server
    server.pages["/multi"] = Page(keys_page(["s1", "s2", "s3"]), etag='"m1"')
    crawler = Crawler(tmp_path, None, spider=spider)
    run = ("-a", f"base={base}", *TEST_SPIDERS)
    assert crawler.run(*run).stats["changewatch/commit/baseline"] == 3
    second = crawler.run(*run)  # a 304: the stand-in callback takes the request's cb_kwargs too
    assert server.sent("/multi")[-1] == ('"m1"', None, 304)
    assert second.records == [] and second.stats["changewatch/commit/none"] == 3
    assert not any(k.startswith("spider_exceptions") for k in second.stats), second.stats
    # the page stops yielding s3: its validators go, or they would disagree with the others for ever
    server.pages["/multi"] = Page(keys_page(["s1", "s2"]), etag='"m2"')
    third = crawler.run(*run)
    assert server.sent("/multi")[-1] == ('"m1"', None, 200) and third.stats["changewatch/commit/none"] == 2
    fourth = crawler.run(*run)
    assert server.sent("/multi")[-1] == ('"m2"', None, 304)
    assert "changewatch/conditional/full_fetch_keys_disagree" not in fourth.stats
