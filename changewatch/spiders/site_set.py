"""A site watch's page set in a crawl, in memory that does not grow with the stored set: the
stored set is rows of the store (:class:`changewatch.store.PageSetStore`), read a batch at a time
in URL order and merged with what a sitemap lists, which the crawl holds once, as a sorted list
of canonical URLs with an array of lastmods beside it (no dict, no entity dictionaries).

What the merge decides (which pages are new, gone, left out by ``max_pages``; each page's
lastmod plan) is :mod:`changewatch.core.siteset`'s; the rows change in the commit of the set's
observation (``Outcome.pages``), so a crawl killed at any instant leaves the set and its record
together or neither."""

from __future__ import annotations

import logging
import math
from array import array
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..core import clock
from ..core.schedule import DueEntry
from ..core.siteset import PageSetDelta, parse_lastmod
from ..core.urls import canonical_url
from ..runtime.stats import Stats
from ..store import MaintainedStore, PageSetStore, StoreError
from ..store.semantics import format_time
from ..watchlist.site import allowed

if TYPE_CHECKING:
    from ..runtime.services import CrawlServices
    from ..watchlist import Watch

__all__ = ["BATCH", "ListedPages", "Listing", "SetRead", "StoredPages", "merged"]

logger = logging.getLogger(__name__)

#: rows of a stored set read at once
BATCH = 1000
_NONE = math.nan  # an absent lastmod or fetch time in an array('d')
_LASTMODS_KEPT = 10_000  # distinct lastmod texts parsed once each


class Listing:
    """What a site's sitemaps list, as it is read: canonical URLs the watch allows (the first
    lastmod of each), and how many URLs were listed at all."""

    def __init__(self, watch: Watch):
        self.watch = watch
        self.pages: dict[str, float | None] = {}
        self.found = 0
        self._lastmods: dict[str, float | None] = {}  # a site's lastmods repeat: each parsed once

    def add(self, url: str, lastmod: str | None) -> None:
        self.found += 1
        canonical = canonical_url(url, keep=self.watch.keep_params, drop=self.watch.drop_params)
        if canonical in self.pages or not allowed(self.watch.site, canonical):  # type: ignore[arg-type]
            return
        text = lastmod or ""
        value = self._lastmods.get(text, _NONE)
        if value is _NONE:
            value = parse_lastmod(lastmod)
            if len(self._lastmods) < _LASTMODS_KEPT:
                self._lastmods[text] = value
        self.pages[canonical] = value

    def sorted(self) -> tuple[list[str], array[float]]:
        """The pages in URL order, and their lastmods (NaN: none); the listing is emptied."""
        urls = sorted(self.pages)
        lastmods = array("d", (_NONE if (t := self.pages[u]) is None else t for u in urls))
        self.pages, self._lastmods = {}, {}
        return urls, lastmods


@dataclass(slots=True)
class SetRead:
    """A sitemap's listing merged with the stored set: per listed page (by index), whether it is
    stored, its page key's due state (:class:`DueEntry`'s four times, NaN: none), whether it is in
    the new set; the stored pages no longer listed; how many pages were stored."""

    urls: list[str]
    lastmods: array[float]
    stored: bytearray = field(default_factory=bytearray)
    #: last_seen, due_at, interval, listed_at of each listed page's key
    due: tuple[array[float], ...] = ()
    selected: bytearray = field(default_factory=bytearray)
    gone: list[str] = field(default_factory=list)
    stored_count: int = 0

    def __len__(self) -> int:
        return sum(self.selected)

    def pages(self) -> Iterator[str]:
        return (url for url, chosen in zip(self.urls, self.selected, strict=True) if chosen)

    def select(self, max_pages: int) -> int:
        """At most *max_pages* pages, those stored first (a page already watched is never pushed
        out by a new one that sorts before it), then new ones in URL order; how many were left out."""
        n = len(self.urls)
        if n <= max_pages:
            self.selected = bytearray(b"\x01") * n
            return 0
        self.selected = bytearray(n)
        room = max_pages
        for wanted in (1, 0):
            for i in range(n):
                if room and self.stored[i] == wanted:
                    self.selected[i], room = 1, room - 1
        return n - max_pages

    def delta(self, *, first: bool, spec: str | None) -> PageSetDelta:
        """The rows the set's commit writes, and what its record says."""
        added = [u for u, s, c in zip(self.urls, self.stored, self.selected, strict=True) if c and not s]
        dropped = [u for u, s, c in zip(self.urls, self.stored, self.selected, strict=True) if s and not c]
        return PageSetDelta(added=added, removed=self.gone, dropped=dropped, first=first, spec=spec)

    def entry(self, i: int) -> DueEntry | None:
        """The due state of page *i*'s key (None: never stored)."""
        values = [None if math.isnan(column[i]) else column[i] for column in self.due]
        return None if values == [None] * 4 else DueEntry(*values)

    def lastmod(self, i: int) -> float | None:
        lastmod = self.lastmods[i]
        return None if math.isnan(lastmod) else lastmod


class ListedPages:
    """Keys of pages left alone this run (their lastmod did not move), noted as still watched a
    batch at a time, as the housekeeper notes the keys the schedule skips."""

    def __init__(self, runtime: CrawlServices):
        self.runtime = runtime
        self.keys: list[str] = []

    async def add(self, key: str) -> None:
        self.keys.append(key)
        if len(self.keys) >= BATCH:
            await self.flush()

    async def flush(self) -> None:
        store, keys = self.runtime.runner.store, self.keys
        self.keys = []
        if not keys or not isinstance(store, MaintainedStore):
            return
        try:
            await self.runtime.runner.call(store.mark_listed, self.runtime.spider, keys, format_time(clock.now()))
        except StoreError as exc:  # the next run notes them again; forgetting waits far longer than a run
            logger.warning("changewatch: site: pages left alone cannot be noted as still watched (%s)", exc)
        Stats(self.runtime.crawler, "housekeeping").inc("listed", len(keys))


class StoredPages:
    """A site watch's stored set, read from the crawl's store a batch at a time."""

    def __init__(self, runtime: CrawlServices, site: str):
        self.runtime, self.site = runtime, site

    def _store(self) -> PageSetStore:
        store = self.runtime.runner.store
        if not isinstance(store, PageSetStore):
            raise StoreError(f"the store {store!r} cannot keep a site's page set (it lacks "
                             "changewatch.store.PageSetStore)")
        return store

    async def batches(self, limit: int = BATCH) -> AsyncIterator[list[tuple[str, DueEntry | None]]]:
        store, after = self._store(), ""
        while rows := await self.runtime.runner.call(store.site_pages, self.runtime.spider, self.site, after, limit):
            yield rows
            after = rows[-1][0]

    def batches_now(self, limit: int = BATCH) -> Iterator[list[tuple[str, DueEntry | None]]]:
        """:meth:`batches` for a synchronous caller (an errback)."""
        store, after = self._store(), ""
        while rows := self.runtime.runner.call_now(store.site_pages, self.runtime.spider, self.site, after, limit):
            yield rows
            after = rows[-1][0]

    async def spec(self) -> str | None:
        """How the stored set was chosen (None: no set is stored)."""
        return await self.runtime.runner.call(self._store().site_spec, self.runtime.spider, self.site)

    async def urls(self) -> set[str]:
        """The whole stored set (link mode, bounded by ``max_pages``)."""
        return {url async for rows in self.batches() for url, _ in rows}


async def merged(urls: list[str], lastmods: array[float], stored: StoredPages) -> SetRead:
    """*urls* (sorted) merged with the stored set, read in URL order beside them."""
    read = SetRead(urls, lastmods, stored=bytearray(len(urls)),
                   due=tuple(array("d", [_NONE]) * len(urls) for _ in range(4)))
    i, n = 0, len(urls)
    async for rows in stored.batches():
        for url, entry in rows:
            read.stored_count += 1
            while i < n and urls[i] < url:
                i += 1
            if i < n and urls[i] == url:
                read.stored[i] = 1
                if entry is not None:
                    for column, value in zip(read.due, (entry.last_seen, entry.due_at, entry.interval,
                                                        entry.listed_at), strict=True):
                        column[i] = _NONE if value is None else value
            else:
                read.gone.append(url)
    return read
