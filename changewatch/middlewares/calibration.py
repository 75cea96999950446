"""``CalibrationMiddleware``: notes which request each item's response answered (what a
calibration load, ``-a calibrate=N``, repeats: a 304 included), and drops the requests a
calibration load's page leads to (a category page's products, its next page): the normal load
made them already, and they are not made again N times."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Iterator
from typing import Any

from scrapy import Request, signals
from scrapy.crawler import Crawler
from scrapy.http import Response

from .. import meta
from ..runtime.origins import ItemRequests
from ..runtime.services import CrawlServices
from ..runtime.stats import Stats

__all__ = ["CalibrationMiddleware"]


class CalibrationMiddleware:
    """Spider middleware; ``changewatch.Addon`` enables it at 940: nearer the engine than the
    others, so that it sees the items they add (the observation of a 304)."""

    def __init__(self, stats: Stats, requests: ItemRequests):
        self.stats = stats
        self.requests = requests

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CalibrationMiddleware:
        runtime = CrawlServices.of(crawler)
        mw = cls(Stats(crawler, "calibration"), runtime.requests)
        crawler.signals.connect(mw.requests.forget, signal=signals.item_dropped)
        crawler.signals.connect(mw.requests.forget, signal=signals.item_error)
        return mw

    def _keep(self, response: Response, item: Any) -> bool:
        if not isinstance(item, Request):
            if response.request is not None:
                self.requests.register(item, response.request)
            return True
        if response.meta.get(meta.CALIBRATION):
            self.stats.inc("requests_dropped")
            return False
        return True

    def process_spider_output(self, response: Response, result: Iterable[Any]) -> Iterator[Any]:
        return (item for item in result if self._keep(response, item))

    async def process_spider_output_async(self, response: Response, result: AsyncIterator[Any]) -> AsyncIterator[Any]:
        async for item in result:
            if self._keep(response, item):
                yield item
