"""Adaptive revisits (docs/schedule.md): requests for keys that are not due are never made.

A spider middleware, so that a skipped watch costs nothing: not a request object queued, not a
slot of the downloader, not a line of Scrapy's log. It looks at every request a spider makes,
from ``start()`` and from callbacks alike, that names its key (``meta["changewatch_key"]``: every
request of the ``watch`` spider, and those of ``ChangewatchSpider.watch(key=...)``); a request
without one (a category page leading to products) is always made. A key is due by its watch's
``every`` (``meta["changewatch_every"]``), else, with ``CHANGEWATCH_SCHEDULE_ENABLED``, by the due
time its change rate gives it (core/schedule.py); ``-a force=1`` makes every key due, and
``meta["changewatch_schedule"] = False`` makes a request always made (a page leading to others:
``ChangewatchSpider.watch(conditional=False)`` sets it).

A skipped key is not a missing page: nothing is observed, so nothing about it changes (its
error streak, validators, pending deliveries); it is noted as still watched, so that
``CHANGEWATCH_FORGET_AFTER`` never forgets it (runtime/housekeeping.py).
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from typing import Any

from scrapy import Request, signals
from scrapy.crawler import Crawler
from scrapy.http import Response

from .. import meta
from ..core import clock
from ..core.durations import format_duration, parse_duration
from ..core.schedule import DueEntry, decide, iso
from ..runtime.services import CrawlServices
from ..runtime.stats import Stats
from ..store import MaintainedStore, StoreError

__all__ = ["ScheduleMiddleware"]

logger = logging.getLogger(__name__)

#: a key skipped is noted as listed once it was neither fetched nor listed for this share of
#: CHANGEWATCH_FORGET_AFTER: a few writes per key and FORGET_AFTER, not one per run
_LISTED_REFRESH = 0.25


class ScheduleMiddleware:
    """Spider middleware (955; ``changewatch.Addon`` enables it): drops the requests of keys that
    are not due, counts due, skipped and overdue keys."""

    def __init__(self, crawler: Crawler, runtime: CrawlServices):
        self.crawler = crawler
        self.runtime = runtime
        self.stats = Stats(crawler, "schedule")
        self.counts: Counter[str] = Counter()
        self._table: Mapping[str, DueEntry] | None = None
        self._loading = asyncio.Lock()
        self._next_due: float | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ScheduleMiddleware:
        mw = cls(crawler, CrawlServices.of(crawler))
        crawler.signals.connect(mw._closed, signal=signals.spider_closed)
        return mw

    async def process_start(self, start: AsyncIterator[Any]) -> AsyncIterator[Any]:
        async for item in start:
            if await self._keep(item):
                yield item

    def process_spider_output(self, response: Response, result: Iterable[Any]) -> Iterator[Any]:
        # Universal (a sync and an async method), as Scrapy asks of a middleware for any version:
        # a Scrapy that runs a synchronous chain for a callback returning a list (the watch
        # spider's do) calls this one; Scrapy 2.19 always calls the async one.
        for item in result:
            if self._keep_now(item):
                yield item

    async def process_spider_output_async(self, response: Response,
                                          result: AsyncIterator[Any]) -> AsyncIterator[Any]:
        async for item in result:
            if await self._keep(item):
                yield item

    def _checked(self, item: Any) -> tuple[bool, float | None]:
        """Whether *item* is a request the schedule decides, and its ``every`` (None: only the
        adaptive schedule decides)."""
        if not isinstance(item, Request) or item.meta.get(meta.KEY) is None or item.meta.get(meta.SCHEDULE) is False:
            return False, None
        every = self._every(item)
        return every is not None or self.runtime.config.schedule_enabled, every

    async def _keep(self, item: Any) -> bool:
        decided, every = self._checked(item)
        if not decided:
            return True
        if meta._DUE_ENTRY in item.meta:
            return self._decide(item, item.meta[meta._DUE_ENTRY], every)
        table = await self._due_table()
        if table is None:
            return True
        return self._decide(item, table.get(str(item.meta[meta.KEY])), every)

    def _keep_now(self, item: Any) -> bool:
        """:meth:`_keep` without awaiting: the due table is read at the first request that needs
        it, most often a start request (``process_start``, awaited); a callback's request needing
        it first reads it here, with the store's own call (one read a crawl)."""
        decided, every = self._checked(item)
        if not decided:
            return True
        if meta._DUE_ENTRY in item.meta:
            return self._decide(item, item.meta[meta._DUE_ENTRY], every)
        table = self._table if self._table is not None else self._due_table_now()
        if table is None:
            return True
        return self._decide(item, table.get(str(item.meta[meta.KEY])), every)

    def _decide(self, item: Request, entry: DueEntry | None, every: float | None) -> bool:
        adaptive = self.runtime.config.schedule_enabled
        key, now = str(item.meta[meta.KEY]), clock.now().timestamp()
        due = decide(entry, now, every=every, adaptive=adaptive)
        if due.due or self.runtime.force:
            self.counts["due"] += 1
            self.stats.inc("due")
            if due.overdue:
                self.counts["overdue"] += 1
                self.stats.inc("overdue")
            if not due.due:
                self.counts["forced"] += 1
                self.stats.inc("forced")
            return True
        self.counts["skipped"] += 1
        self.stats.inc("skipped")
        if due.at is not None and (self._next_due is None or due.at < self._next_due):
            self._next_due = due.at
        self._note_listed(key, entry, now)
        return False

    def _every(self, request: Request) -> float | None:
        value = request.meta.get(meta.EVERY)
        if value is None:
            return None
        try:
            every = parse_duration(value)
        except ValueError as exc:
            # fetched, never skipped: a bad interval must not cost a change
            self.stats.inc("invalid")
            logger.error("changewatch: %s: meta[%r] = %r: %s; fetched as if it had none", request.url, meta.EVERY,
                         value, exc)
            return None
        maximum = self.runtime.config.schedule_max_interval
        if every <= maximum:
            return every
        # "never later" holds for every key: of the watch's every and the bound, the stricter wins
        if not self.counts["capped"]:
            logger.warning("changewatch: schedule: %s: every %s is longer than CHANGEWATCH_SCHEDULE_MAX_INTERVAL = %s: "
                           "the stricter wins, it is fetched once %s after its last fetch (so is any other such "
                           "watch, counted in changewatch/schedule/capped)", request.meta[meta.KEY],
                           format_duration(every), format_duration(maximum), format_duration(maximum))
        self.counts["capped"] += 1
        self.stats.inc("capped")
        return maximum

    def _schedule_store(self) -> MaintainedStore | None:
        """The store, if it can keep a schedule; else the crawl fails (and None)."""
        store = self.runtime.runner.store
        if isinstance(store, MaintainedStore):
            return store
        self.runtime.fail(f"the store {store!r} cannot keep a schedule (it lacks "
                          "changewatch.store.MaintainedStore), and watches with `every` or "
                          "CHANGEWATCH_SCHEDULE_ENABLED need one")
        return None

    async def _due_table(self) -> Mapping[str, DueEntry] | None:
        """Every key's due state, read once (at the first request that needs it)."""
        async with self._loading:
            if self._table is None:
                if (store := self._schedule_store()) is None:
                    return None
                await self.runtime.open()
                try:
                    self._table = await self.runtime.runner.call(self._read_table, store)
                except StoreError as exc:
                    self.runtime.fail(f"the store cannot be read: {exc}")
                    return None
            return self._table

    def _due_table_now(self) -> Mapping[str, DueEntry] | None:
        """:meth:`_due_table` from a synchronous caller: read directly (the store is open while
        responses are processed; a store that is not, or that cannot keep a schedule, makes the
        request be made, never skipped)."""
        if (store := self._schedule_store()) is None or not self.runtime.is_open:
            return None
        try:
            self._table = self.runtime.runner.call_now(self._read_table, store)
        except StoreError as exc:
            self.runtime.fail(f"the store cannot be read: {exc}")
            return None
        return self._table

    def _read_table(self, store: MaintainedStore) -> Mapping[str, DueEntry]:
        """The due table, after moving the due times set under other bounds within this crawl's:
        "never sooner, never later" holds from the first run with changed bounds (docs/schedule.md)."""
        spider, config = self.runtime.spider, self.runtime.config
        if config.schedule_enabled:
            moved = store.bound_schedule(spider, config.schedule_min_interval, config.schedule_max_interval)
            if moved:
                self.stats.inc("rebounded", moved)
                logger.info("changewatch: schedule: %d key(s) moved to the bounds CHANGEWATCH_SCHEDULE_MIN_INTERVAL "
                            "= %s and _MAX_INTERVAL = %s (their due times were set under other bounds)", moved,
                            format_duration(config.schedule_min_interval),
                            format_duration(config.schedule_max_interval))
        return store.due_table(spider)

    def _note_listed(self, key: str, entry: DueEntry | None, now: float) -> None:
        forget_after = self.runtime.config.forget_after
        if entry is None or forget_after is None:
            return
        seen = max(entry.last_seen or 0.0, entry.listed_at or 0.0)
        if now - seen > forget_after * _LISTED_REFRESH:
            self.runtime.housekeeper.listed.add(key)

    def _closed(self) -> None:
        if not self.counts:
            return
        soonest = f"; the next one is due at {iso(self._next_due)}" if self._next_due is not None else ""
        logger.info("changewatch: schedule: %d due (%d overdue%s), %d not due, skipped%s", self.counts["due"],
                    self.counts["overdue"], f", {self.counts['forced']} forced" if self.counts["forced"] else "",
                    self.counts["skipped"], soonest)
