"""The generic ``watch`` spider: a watchlist file in, change records out. No code to write."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import scrapy
from scrapy.crawler import Crawler
from scrapy.http import Response
from twisted.python.failure import Failure

from ..items import Observation
from ..observe import describe_failure, failed_url, observe_watch
from ..stats import Stats
from ..vantage import META_KEY as VANTAGE_META_KEY
from ..watchlist import Watch, load_watchlist

__all__ = ["WatchSpider"]


class WatchSpider(scrapy.Spider):
    """``scrapy crawl watch -a watchlist=watchlist.yaml -O changes.jsonl``"""

    name = "watch"
    cw_stats: Stats

    def __init__(self, watchlist: str | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        if not watchlist:
            raise ValueError("the watch spider needs a watchlist: scrapy crawl watch -a watchlist=FILE")
        # Validated here, before anything is fetched: a bad watchlist fails the run at start.
        self.watches: list[Watch] = load_watchlist(watchlist)

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> WatchSpider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider.cw_stats = Stats(crawler, "watch")
        return spider

    async def start(self) -> AsyncIterator[Any]:
        for watch in self.watches:
            meta: dict[str, Any] = {"changewatch_watch": watch, "changewatch_key": watch.key,
                                    "changewatch_conditional": watch.conditional, "changewatch_spec": watch.spec()}
            if watch.vantage:  # the VantageMiddleware pins proxy, language, cookies and headers
                meta[VANTAGE_META_KEY] = watch.vantage
            yield scrapy.Request(watch.url, callback=self.parse_watch, errback=self.failed,
                                 dont_filter=True, meta=meta)

    def parse_watch(self, response: Response) -> Iterator[Observation]:
        watch: Watch = response.meta["changewatch_watch"]
        obs, invalid_jsonld = observe_watch(watch, response)
        if invalid_jsonld:
            self.cw_stats.inc("jsonld_invalid_blocks", invalid_jsonld)
        self.cw_stats.inc("error" if obs.error else "observed")
        yield obs

    def failed(self, failure: Failure) -> Iterator[Observation]:
        request = failure.request  # type: ignore[attr-defined]
        watch: Watch = request.meta["changewatch_watch"]
        self.cw_stats.inc("failed")
        url = failed_url(request.url)
        yield Observation(key=watch.key, url=url, options=watch.options(), error=describe_failure(failure))
