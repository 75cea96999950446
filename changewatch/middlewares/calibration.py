"""``CalibrationMiddleware``: a calibration load (``-a calibrate=N``) only teaches its key's
learned variation; the requests its page leads to (a category page's products, its next page)
were made by the normal load already, and are not made again N times."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Iterator
from typing import Any

from scrapy import Request
from scrapy.crawler import Crawler
from scrapy.http import Response

from .. import meta
from ..runtime.stats import Stats

__all__ = ["CalibrationMiddleware"]


class CalibrationMiddleware:
    """Spider middleware; ``changewatch.Addon`` enables it at 957."""

    def __init__(self, stats: Stats):
        self.stats = stats

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> CalibrationMiddleware:
        return cls(Stats(crawler, "calibration"))

    def _keep(self, response: Response, item: Any) -> bool:
        if isinstance(item, Request) and response.meta.get(meta.CALIBRATION):
            self.stats.inc("requests_dropped")
            return False
        return True

    def process_spider_output(self, response: Response, result: Iterable[Any]) -> Iterator[Any]:
        return (item for item in result if self._keep(response, item))

    async def process_spider_output_async(self, response: Response, result: AsyncIterator[Any]) -> AsyncIterator[Any]:
        async for item in result:
            if self._keep(response, item):
                yield item
