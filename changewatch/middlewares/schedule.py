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
from typing import Any, NamedTuple

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

#: requests held while their keys' due states are read: one read for this many
LOOKUP_BATCH = 256
#: a key skipped is noted as listed once it was neither fetched nor listed for this share of
#: CHANGEWATCH_FORGET_AFTER: a few writes per key and FORGET_AFTER, not one per run
_LISTED_REFRESH = 0.25


class _Held(NamedTuple):
    item: Any
    decided: bool
    every: float | None
    lookup: bool

    @property
    def key(self) -> str:
        return str(self.item.meta[meta.KEY])


class ScheduleMiddleware:
    """Spider middleware (955; ``changewatch.Addon`` enables it): drops the requests of keys that
    are not due, counts due, skipped and overdue keys."""

    def __init__(self, crawler: Crawler, runtime: CrawlServices):
        self.crawler = crawler
        self.runtime = runtime
        self.stats = Stats(crawler, "schedule")
        self.counts: Counter[str] = Counter()
        self._bounded = False  # the crawl's bounds applied to the stored due times
        self._loading = asyncio.Lock()
        self._next_due: float | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ScheduleMiddleware:
        mw = cls(crawler, CrawlServices.of(crawler))
        crawler.signals.connect(mw._closed, signal=signals.spider_closed)
        return mw

    async def process_start(self, start: AsyncIterator[Any]) -> AsyncIterator[Any]:
        async for item in self._kept(start):
            yield item

    def process_spider_output(self, response: Response, result: Iterable[Any]) -> Iterator[Any]:
        # Universal (a sync and an async method), as Scrapy asks of a middleware for any version:
        # a Scrapy that runs a synchronous chain for a callback returning a list (the watch
        # spider's do) calls this one; Scrapy 2.19 always calls the async one.
        held = [self._held(item) for item in result]
        entries = self._entries_now([h.key for h in held if h.lookup])
        for h in held:
            if self._released(h, entries):
                yield h.item

    async def process_spider_output_async(self, response: Response,
                                          result: AsyncIterator[Any]) -> AsyncIterator[Any]:
        async for item in self._kept(result):
            yield item

    async def _kept(self, items: AsyncIterator[Any]) -> AsyncIterator[Any]:
        """*items* less the requests not due. A request whose key's due state it must read is held
        with those after it (their order kept) until LOOKUP_BATCH are held or *items* end: one read
        for them all, of their keys alone."""
        held: list[_Held] = []
        async for item in items:
            h = self._held(item)
            if not (h.lookup or held):
                if self._released(h, None):
                    yield item
                continue
            held.append(h)
            if len(held) >= LOOKUP_BATCH:
                for kept in await self._release(held):
                    yield kept
                held = []
        if held:
            for kept in await self._release(held):
                yield kept

    async def _release(self, held: list[_Held]) -> list[Any]:
        keys = [h.key for h in held if h.lookup]
        entries = await self._entries(keys) if keys else {}
        return [h.item for h in held if self._released(h, entries)]

    def _held(self, item: Any) -> _Held:
        """*item* with what deciding it takes: whether the schedule decides it, its ``every``, and
        whether its key's due state must be read (it carries none)."""
        if not isinstance(item, Request) or item.meta.get(meta.KEY) is None or item.meta.get(meta.SCHEDULE) is False:
            return _Held(item, False, None, False)
        every = self._every(item)
        decided = every is not None or self.runtime.config.schedule_enabled
        return _Held(item, decided, every, decided and meta._DUE_ENTRY not in item.meta)

    def _released(self, h: _Held, entries: Mapping[str, DueEntry] | None) -> bool:
        """Whether *h*'s item goes on: not decided by the schedule, or due by the due state it
        carries or *entries* has (None: they could not be read, and the request is made)."""
        if not h.decided:
            return True
        if not h.lookup:
            return self._decide(h.item, h.item.meta[meta._DUE_ENTRY], h.every)
        if entries is None:
            return True
        return self._decide(h.item, entries.get(h.key), h.every)

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

    async def _entries(self, keys: list[str]) -> Mapping[str, DueEntry] | None:
        """The due states of *keys* (one read; None: the store cannot keep a schedule, or cannot
        be read)."""
        if (store := self._schedule_store()) is None:
            return None
        await self.runtime.open()
        try:
            async with self._loading:  # the bounds are applied once, before the first read
                return await self.runtime.runner.call(self._read_entries, store, keys)
        except StoreError as exc:
            self.runtime.fail(f"the store cannot be read: {exc}")
            return None

    def _entries_now(self, keys: list[str]) -> Mapping[str, DueEntry] | None:
        """:meth:`_entries` from a synchronous caller: read directly (the store is open while
        responses are processed; a store that is not, or that cannot keep a schedule, makes the
        requests be made, never skipped)."""
        if not keys:
            return {}
        if (store := self._schedule_store()) is None or not self.runtime.is_open:
            return None
        try:
            return self.runtime.runner.call_now(self._read_entries, store, keys)
        except StoreError as exc:
            self.runtime.fail(f"the store cannot be read: {exc}")
            return None

    def _read_entries(self, store: MaintainedStore, keys: list[str]) -> Mapping[str, DueEntry]:
        """The due states of *keys*; before the crawl's first read, the due times set under other
        bounds are moved within this crawl's: "never sooner, never later" holds from the first
        run with changed bounds (docs/schedule.md)."""
        spider, config = self.runtime.spider, self.runtime.config
        if config.schedule_enabled and not self._bounded:
            moved = store.bound_schedule(spider, config.schedule_min_interval, config.schedule_max_interval)
            self._bounded = True
            if moved:
                self.stats.inc("rebounded", moved)
                logger.info("changewatch: schedule: %d key(s) moved to the bounds CHANGEWATCH_SCHEDULE_MIN_INTERVAL "
                            "= %s and _MAX_INTERVAL = %s (their due times were set under other bounds)", moved,
                            format_duration(config.schedule_min_interval),
                            format_duration(config.schedule_max_interval))
        return store.due_entries(spider, keys)

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
