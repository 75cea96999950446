"""What the runtime reads of a spider (changewatch/runtime/spider.py): a ChangewatchSpider's and the
watch spider's declarations, the defaults for any other Scrapy spider, and the watch spider's
start problems handled by ChangewatchSpider."""

from __future__ import annotations

import json
import logging

import pytest
import scrapy
from scrapy.utils.test import get_crawler

from changewatch.config import ConfigError
from changewatch.runtime.spider import SpiderOptions, spider_options
from changewatch.spider import ChangewatchSpider
from changewatch.spiders.watch import WatchSpider

WATCHLIST = json.dumps({"watches": [{"url": "https://a.example/", "key": "a",
                                     "canary": {"expect": "change", "within": "2d"}},
                                    {"url": "https://b.example/"}]})
WITH_RUNTIME = {"ADDONS": {"changewatch.Addon": 0}}


class Plain(scrapy.Spider):
    name = "plain"


class Site(ChangewatchSpider):
    name = "site"


def test_a_spider_that_declares_nothing_gets_the_defaults() -> None:
    options = spider_options(Plain())
    assert options == SpiderOptions(canaries=options.canaries)
    assert options.canaries() == {} and options.calibrate is None and options.forget is None


def test_a_changewatch_spider_declares_its_arguments() -> None:
    options = spider_options(Site(calibrate="3", forget="k"))
    assert (options.calibrate, options.forget, options.cannot_start, options.renders) == (3, {"k"}, None, False)
    assert options.listed is None and options.canaries() == {}


def test_a_bad_calibrate_is_said_once_and_stops_the_crawl(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR):
        spider = Site.from_crawler(get_crawler(Site, WITH_RUNTIME), calibrate="abc")
    assert spider_options(spider).cannot_start == (
        "spider 'site': calibrate must be a whole number of extra loads from 0 to 100, not 'abc'")
    assert [r.getMessage() for r in caplog.records] == [
        "The spider 'site' cannot start: calibrate must be a whole number of extra loads from 0 to 100, not 'abc'"]


def test_the_watch_spider_declares_its_watchlist() -> None:
    spider = WatchSpider.from_crawler(get_crawler(WatchSpider, WITH_RUNTIME), watchlist=WATCHLIST, calibrate="2")
    options = spider_options(spider)
    assert (options.listed, options.calibrate, options.renders, options.cannot_start) == (2, 2, False, None)
    assert options.canaries() == {"a": ("https://a.example/", {"expect": "change", "within": 172800.0})}
    assert spider.cw_stats is not None and spider_options(spider).forget == frozenset()


def test_a_bad_watchlist_stops_the_crawl_with_its_line(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR):
        spider = WatchSpider.from_crawler(get_crawler(WatchSpider, WITH_RUNTIME), watchlist='{"watches": 1}')
    cannot_start = spider_options(spider).cannot_start
    assert cannot_start is not None and cannot_start.startswith("the watchlist cannot be used: (inline JSON): ")
    assert [r.name for r in caplog.records] == ["changewatch.spiders.watch"]
    assert caplog.records[0].getMessage().startswith("The watch spider cannot start: (inline JSON): ")
    assert spider_options(spider).listed == 0


def test_without_the_runtime_the_spider_is_not_built() -> None:
    """Nothing would compare or store: every observation would leave the crawl as a change."""
    with pytest.raises(ConfigError, match=r"spider 'watch' needs changewatch enabled: add ADDONS = "
                                          r"\{\"changewatch.Addon\": 0\}"):
        WatchSpider.from_crawler(get_crawler(WatchSpider, {}))


def test_with_the_runtime_a_bad_watchlist_stops_the_crawl_as_it_opens() -> None:
    crawler = get_crawler(WatchSpider, {"ADDONS": {"changewatch.Addon": 0}})
    spider = WatchSpider.from_crawler(crawler)
    assert spider.changewatch_cannot_start is not None
    assert "the watch spider needs a watchlist" in spider.changewatch_cannot_start
