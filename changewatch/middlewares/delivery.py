"""At-least-once delivery of change records.

A change is logged in the store in the same transaction as the state it moves to, leased to the
process that logged it; that it left the crawl is only known when the feeds that carried it were
closed cleanly. Until then the change is *undelivered*: the next run of the spider that finds it
unclaimed (its owner's lease expired, or its owner is a dead process on this host) exports it
again, first, marked ``"redelivery": true`` with the same ``change_id``, so consumers can drop
what they already have. A crawl killed at any instant therefore loses no change; two live
processes never both re-export one; a consumer that dedupes by ``change_id`` sees each exactly
once.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncIterator
from typing import Any

from itemadapter import ItemAdapter
from scrapy import signals
from scrapy.crawler import Crawler

from ..items import utc_now
from ..runtime.services import CrawlServices
from ..runtime.stats import Stats
from ..store import LoggedChange, StoreError
from ..store.leases import dead_owners

__all__ = ["RedeliveryMiddleware"]

logger = logging.getLogger(__name__)


def change_id_of(item: Any) -> int | None:
    """The change-log id an exported item carries, whatever its item kind (the ``exported`` hook
    or a later pipeline may have made the record the project's own item class)."""
    if isinstance(item, dict):  # what the pipeline exports, and every dropped observation of the watch spider
        value = item.get("change_id")
    elif ItemAdapter.is_item(item):
        value = ItemAdapter(item).get("change_id")
    else:
        return None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class RedeliveryMiddleware:
    """Spider middleware: exports, at the start of a run, the spider's undelivered changes that no
    live process holds (claiming them with this process's lease), renews the lease while the
    crawl runs, and confirms a run's changes as delivered once its feeds are closed cleanly.

    Delivery means a feed: a run without one (no ``-O``/``-o``, no FEEDS) claims nothing and
    confirms nothing: its changes stay undelivered (their leases released) and go out, as
    redeliveries, with the next run that has a feed; the run says so when it starts and when it
    ends. A record an item pipeline dropped was consumed there (the user's
    filter or sink): confirmed either way."""

    def __init__(self, crawler: Crawler, runtime: CrawlServices):
        self.crawler = crawler
        self.runtime = runtime
        self.runner = runtime.runner
        self.stats = Stats(crawler, "delivery")
        self.ids: list[int] = []  # exported records (scraped), and consumed ones (dropped)
        self.consumed: list[int] = []
        self.has_feeds = bool(crawler.settings.getdict("FEEDS"))
        self._renewal: asyncio.Task[None] | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RedeliveryMiddleware:
        mw = cls(crawler, CrawlServices.of(crawler))
        crawler.signals.connect(mw._handled, signal=signals.item_scraped)
        # a pipeline that drops a record (the user's filter) has consumed it: never redeliver it
        crawler.signals.connect(mw._consumed, signal=signals.item_dropped)
        crawler.signals.connect(mw._feeds_closed, signal=signals.feed_exporter_closed)
        crawler.signals.connect(mw._spider_closed, signal=signals.spider_closed)
        return mw

    async def process_start(self, start: AsyncIterator[Any]) -> AsyncIterator[Any]:
        await self.runtime.open()
        # `scrapy check` (it sets SCRAPY_CHECK) discards what a crawl yields: a change
        # redelivered there would be confirmed without ever reaching a feed.
        pending: list[LoggedChange] = []
        # Without a feed nothing would carry a redelivery: the changes wait for a run that has one
        # (re-yielding them into every feedless run would only grow with them).
        claims = self.has_feeds and not os.environ.get("SCRAPY_CHECK")
        if claims and not await self.runtime.write(self._claim, pending):
            return  # the store cannot be written: the crawl is stopping
        self._renewal = asyncio.ensure_future(self._renew())
        if not self.has_feeds and not os.environ.get("SCRAPY_CHECK"):
            logger.info("changewatch: this run has no feed (-O FILE, or FEEDS): its changes stay in the store, "
                        "undelivered, and go out with the next run that has one")
        if pending:
            logger.info("changewatch: exporting %d change(s) again whose delivery was never confirmed "
                        "(a run that did not close its feeds)", len(pending))
        for change in pending:
            self.stats.inc("redelivered")
            yield {**change.record, "change_id": change.id, "redelivery": True}
        async for item in start:
            yield item

    def _claim(self, into: list[LoggedChange]) -> None:
        store, spider = self.runner.store, self.runtime.spider
        dead = dead_owners(store.lease_owners(spider))
        if dead:
            self.stats.inc("dead_owners", len(dead))
        into.extend(store.claim_undelivered(spider, self.runtime.lease, dead_owners=dead))

    async def _renew(self) -> None:
        """Keep this process's claim alive while the crawl runs: its changes are not for others."""
        lease = self.runtime.lease
        while True:
            await asyncio.sleep(lease.seconds / 3)  # three chances to renew before it runs out
            try:
                await self.runner.call(self.runner.store.renew_leases, self.runtime.spider, lease)
            except StoreError as exc:  # the pipeline stops the crawl when the store fails for good
                logger.warning("changewatch: could not renew the delivery lease: %s", exc)

    def _handled(self, item: Any) -> None:
        change_id = change_id_of(item)
        if change_id is not None:
            self.ids.append(change_id)

    def _consumed(self, item: Any) -> None:
        change_id = change_id_of(item)
        if change_id is not None:
            self.consumed.append(change_id)

    async def _confirm(self, ids: list[int]) -> None:
        if not ids:
            return
        if await self.runtime.write(self.runner.store.mark_delivered, self.runtime.spider, ids, utc_now()):
            self.stats.inc("confirmed", len(ids))

    async def _feeds_closed(self) -> None:
        stats = self.crawler.stats.get_stats() if self.crawler.stats is not None else {}
        failed = sorted(k for k, v in stats.items() if k.startswith("feedexport/failed_count/") and v)
        if failed:
            ids, self.ids = self.ids + self.consumed, []
            self.consumed = []
            self.stats.inc("unconfirmed", len(ids))
            logger.warning("changewatch: a feed failed to store (%s): its %d change(s) will be exported again by "
                           "the next run", ", ".join(failed), len(ids))
            # Released, not left to expire: the next run may start before the lease would end.
            await self.runtime.write(self.runner.store.release_leases, self.runtime.spider, self.runtime.lease.owner,
                                     ids)
            return
        ids, self.ids, self.consumed = self.ids + self.consumed, [], []
        await self._confirm(ids)

    async def _spider_closed(self) -> None:
        if self._renewal is not None:
            self._renewal.cancel()
            self._renewal = None
        if self.has_feeds:
            return
        consumed, self.consumed = self.consumed, []
        await self._confirm(consumed)
        kept, self.ids = self.ids, []
        if kept:
            self.stats.inc("no_feed", len(kept))
            logger.warning("changewatch: %d change(s) stay undelivered: this run had no feed (-O FILE, or FEEDS); the "
                           "next run with a feed exports them", len(kept))
            # Released, not left to expire: that next run may come before the lease would end.
            await self.runtime.write(self.runner.store.release_leases, self.runtime.spider, self.runtime.lease.owner,
                                     kept)
