"""Health conditions of one watch, opened and closed during a crawl, kept as the health check
keeps its own (docs/health.md): an open condition in the store's health table, logged once to the
change log when it begins (an ``error`` record, ``health: …``) and once when it ends
(``recovered``), and sent through the item pipelines (feeds, delivery) before the spider closes.
A condition's name is ``CONDITION:KEY``; its ``site`` is the host of the watch's URL, as for
every health condition.

Used by the comparison pipeline (``flipping:KEY``, a watch whose text keeps returning to earlier
ones) and by site watches (spiders/site_health.py: ``lastmod:KEY``, ``max_pages:KEY``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import DontCloseSpider

from ..core import clock
from ..core.comparisons.noise import FLIPPING
from ..runtime.services import CrawlServices
from ..store import StoreError
from ..store.health import HealthStore, OpenCondition, site_of
from ..store.semantics import format_time
from .check import Finding
from .journal import health_record, recovery_record

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = ["FLIPPING", "KeyHealth"]

logger = logging.getLogger(__name__)



class KeyHealth:
    """The per-watch health conditions of one crawl."""

    def __init__(self, crawler: Crawler):
        self.crawler = crawler
        self._open: dict[tuple[str, str], OpenCondition] | None = None
        self._unsupported = False
        #: (change id, record) logged and not yet sent through the pipelines
        self._pending: list[tuple[int, dict[str, Any]]] = []
        self._task: asyncio.Task[None] | None = None
        crawler.signals.connect(self._idle, signal=signals.spider_idle)

    @property
    def runtime(self) -> CrawlServices:
        return CrawlServices.of(self.crawler)

    def _store(self) -> HealthStore | None:
        store = self.runtime.runner.store
        if isinstance(store, HealthStore):
            return store
        if not self._unsupported:
            self._unsupported = True
            logger.warning("changewatch: the store %s keeps no health conditions: a watch's health conditions "
                           "(a site's untrusted lastmod, its max_pages, a watch that keeps flipping) are not "
                           "remembered between runs", store)
        return None

    def opened(self, key: str, url: str, condition: str) -> OpenCondition | None:
        """The open condition *condition* of the watch *key*."""
        if self._open is None:
            store = self._store()
            self._open = {}
            if store is not None:
                try:
                    conditions = self.runtime.runner.call_now(store.conditions, self.runtime.spider)
                except StoreError as exc:
                    logger.warning("changewatch: the health conditions cannot be read: %s", exc)
                    conditions = []
                self._open = {(c.site, c.condition): c for c in conditions}
        return self._open.get((site_of(url), f"{condition}:{key}"))

    def begin(self, key: str, url: str, condition: str, message: str,
              detail: Mapping[str, Any] | None = None, *, recheck: bool = False) -> bool:
        """Open *condition* of the watch *key* (*message*: its error after ``health: ``; *detail*:
        members of the record and of its ``health``): True when it began now (logged once).
        *recheck*: ask the store even when this crawl saw it open (another process of a
        distributed round may have ended it since; the store opens it once)."""
        store = self._store()
        if store is None or (self.opened(key, url, condition) is not None and not recheck):
            return False
        site, name = site_of(url), f"{condition}:{key}"
        now = format_time(clock.now())
        record = {**health_record(self.runtime.spider, Finding(site, name, True, message, detail), now, url),
                  **(detail or {})}
        change_id = self._call(store.open_condition, self.runtime.spider, site, name, now, record,
                               self.runtime.lease)
        assert self._open is not None
        self._open[(site, name)] = OpenCondition(self.runtime.spider, site, name, now, record["error"], change_id)
        if change_id is None:
            return False
        self._pending.append((change_id, record))
        return True

    def end(self, key: str, url: str, condition: str, detail: Mapping[str, Any] | None = None) -> bool:
        """Close *condition* of the watch *key* when it is open: True when it ended now."""
        store = self._store()
        current = self.opened(key, url, condition) if store is not None else None
        if store is None or current is None:
            return False
        record = {**recovery_record(self.runtime.spider, current, format_time(clock.now()), url), **(detail or {})}
        change_id = self._call(store.close_condition, self.runtime.spider, current.site, current.condition,
                               record, self.runtime.lease)
        assert self._open is not None
        self._open.pop((current.site, current.condition), None)
        if change_id is None:
            return False
        self._pending.append((change_id, record))
        return True

    def _call(self, method: Any, *args: Any) -> int | None:
        try:
            return self.runtime.runner.call_now(method, *args)  # type: ignore[no-any-return]
        except StoreError as exc:
            logger.warning("changewatch: a health condition cannot be stored: %s", exc)
            return None

    # -- the end of the crawl ---------------------------------------------------------------------

    def _idle(self) -> None:
        if self._task is not None and not self._task.done():
            raise DontCloseSpider
        if self.runtime.failure is not None:
            return
        if self._pending:
            self._task = asyncio.ensure_future(self._send())
            raise DontCloseSpider

    async def _send(self) -> None:
        pending, self._pending = self._pending, []
        engine = self.crawler.engine
        for change_id, record in pending:
            if engine is None or self.runtime.failure is not None:
                return  # logged: the next run with a feed exports it
            await engine.scraper.start_itemproc_async({**record, "change_id": change_id}, response=None)
        slot = getattr(engine, "_slot", None)  # let the engine see at once that the spider is idle again
        nextcall = getattr(slot, "nextcall", None)
        if nextcall is not None:
            nextcall.schedule()
