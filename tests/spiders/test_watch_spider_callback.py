"""The watch spider's callback as Scrapy sees it on every response."""

from __future__ import annotations

import inspect

import pytest
from scrapy.utils.misc import is_generator_with_return_value

from changewatch.spiders.watch import WatchSpider


def test_scrapy_never_reads_the_callbacks_source(monkeypatch: pytest.MonkeyPatch) -> None:
    """Scrapy reads and parses a generator callback's source to warn of a return value, and its
    cache holds the bound method weakly: with a generator, that was redone for many responses
    (up to 0.2 ms a page in the crawl process). A callback that returns a list is never read."""
    def refuse(obj: object) -> str:
        raise AssertionError(f"Scrapy read the source of {obj!r}")
    monkeypatch.setattr(inspect, "getsource", refuse)
    spider = WatchSpider(watchlist="w.yaml")
    assert not inspect.isgeneratorfunction(WatchSpider.parse_watch)
    for _ in range(3):
        assert is_generator_with_return_value(spider.parse_watch) is False


def test_an_item_from_an_errback_passes_the_site_check() -> None:
    """Scrapy sends ``item_scraped`` with the Failure in place of the response for an item an
    errback returned (a page that timed out): the site watches' lastmod check lets it pass."""
    from scrapy.utils.test import get_crawler
    from twisted.python.failure import Failure

    spider = WatchSpider.from_crawler(get_crawler(WatchSpider, {"ADDONS": {"changewatch.Addon": 0}}),
                                      watchlist='{"watches": [{"url": "https://a.example/"}]}')
    error = {"kind": "content", "key": "a"}
    spider.sites._scraped(error, Failure(TimeoutError("timed out")), spider)  # no AttributeError
    assert spider.sites.health.wrong == set()
