"""At-least-once delivery of change records.

A change is logged in the store in the same transaction as the state it moves to; that it left
the crawl is only known when the feeds that carried it were closed cleanly. Until then the change
is *undelivered*: the next run of the spider exports it again, first, marked ``"redelivery":
true`` with the same ``change_id``, so consumers can drop what they already have. A crawl killed
at any instant therefore loses no change, and a consumer that dedupes by ``change_id`` sees each
exactly once.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

from scrapy import signals
from scrapy.crawler import Crawler

from ..items import utc_now
from ..runtime.config import ChangewatchConfig
from ..runtime.stats import Stats
from ..store.runner import StoreRunner, spider_name

__all__ = ["RedeliveryMiddleware"]

logger = logging.getLogger(__name__)


def change_id_of(item: Any) -> int | None:
    if isinstance(item, dict):
        value = item.get("change_id")
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


class RedeliveryMiddleware:
    """Spider middleware: exports the spider's undelivered changes at the start of a run, and
    confirms a run's changes as delivered once its feeds are closed cleanly (or, without feeds,
    once the crawl closes: then the item pipelines were the consumers)."""

    def __init__(self, crawler: Crawler, config: ChangewatchConfig):
        self.crawler = crawler
        self.runner = StoreRunner.of(crawler, config)
        self.stats = Stats(crawler, "delivery")
        self.ids: list[int] = []
        self.has_feeds = bool(crawler.settings.getdict("FEEDS"))

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RedeliveryMiddleware:
        mw = cls(crawler, ChangewatchConfig.from_settings(crawler.settings))
        crawler.signals.connect(mw._handled, signal=signals.item_scraped)
        # a pipeline that drops a record (the user's filter) has consumed it: never redeliver it
        crawler.signals.connect(mw._handled, signal=signals.item_dropped)
        crawler.signals.connect(mw._feeds_closed, signal=signals.feed_exporter_closed)
        crawler.signals.connect(mw._spider_closed, signal=signals.spider_closed)
        return mw

    async def process_start(self, start: AsyncIterator[Any]) -> AsyncIterator[Any]:
        pending = await self.runner.call_opened(self.runner.store.undelivered, spider_name(self.crawler))
        if pending:
            logger.info("changewatch: exporting %d change(s) again whose delivery was never confirmed "
                        "(the previous run did not close its feeds)", len(pending))
        for change in pending:
            self.stats.inc("redelivered")
            yield {**change.record, "change_id": change.id, "redelivery": True}
        async for item in start:
            yield item

    def _handled(self, item: Any) -> None:
        change_id = change_id_of(item)
        if change_id is not None:
            self.ids.append(change_id)

    async def _confirm(self) -> None:
        ids, self.ids = self.ids, []
        if not ids:
            return
        await self.runner.call_opened(self.runner.store.mark_delivered, spider_name(self.crawler), ids, utc_now())
        self.stats.inc("confirmed", len(ids))

    async def _feeds_closed(self) -> None:
        stats = self.crawler.stats.get_stats() if self.crawler.stats is not None else {}
        failed = sorted(k for k, v in stats.items() if k.startswith("feedexport/failed_count/") and v)
        if failed:
            self.stats.inc("unconfirmed", len(self.ids))
            logger.warning("changewatch: a feed failed to store (%s): its %d change(s) will be exported again by "
                           "the next run", ", ".join(failed), len(self.ids))
            self.ids = []
            return
        await self._confirm()

    async def _spider_closed(self) -> None:
        if not self.has_feeds:
            await self._confirm()
