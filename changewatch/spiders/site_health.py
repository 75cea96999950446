"""A site watch's two health conditions (docs/sites.md, docs/health.md), kept as the health check
keeps its own: an open condition in the store's health table, logged once to the change log when
it begins (an ``error`` record, ``health: …``) and once when it ends (``recovered``), and sent
through the item pipelines (feeds, delivery) before the spider closes.

- ``lastmod:KEY``: the site watch KEY's sitemap ``<lastmod>`` proved wrong (a page changed while
  its lastmod did not move). While it is open every listed page is checked each run; a run that
  checked every page and found none wrong ends it.
- ``max_pages:KEY``: the site watch KEY found more pages than its ``max_pages``; a discovery
  within the bound ends it.

The condition's ``site`` is the host of the site watch's URL, as for every health condition; the
record's ``site_watch`` is the site watch's key.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import DontCloseSpider

from ..core import clock
from ..distributed import round_scheduler
from ..health.check import Finding
from ..health.journal import health_record, recovery_record
from ..runtime.services import CrawlServices
from ..store import StoreError
from ..store.health import HealthStore, OpenCondition, site_of
from ..store.semantics import format_time

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = ["LASTMOD", "MAX_PAGES", "SiteHealth"]

logger = logging.getLogger(__name__)

LASTMOD = "lastmod"
MAX_PAGES = "max_pages"


class SiteHealth:
    """The site watches' health conditions of one crawl."""

    def __init__(self, crawler: Crawler):
        self.crawler = crawler
        self._open: dict[tuple[str, str], OpenCondition] | None = None
        self._unsupported = False
        #: (change id, record) logged and not yet sent through the pipelines
        self._pending: list[tuple[int, dict[str, Any]]] = []
        #: site watch key → its URL, for the sites whose lastmod a run checks on every page
        self.full_checks: dict[str, str] = {}
        #: site watch keys whose lastmod proved wrong in this crawl
        self.wrong: set[str] = set()
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
            logger.warning("changewatch: the store %s keeps no health conditions: a site's untrusted lastmod and "
                           "its max_pages are not remembered between runs", store)
        return None

    def opened(self, key: str, url: str, condition: str) -> OpenCondition | None:
        """The open condition *condition* (``lastmod`` or ``max_pages``) of the site watch *key*."""
        if self._open is None:
            store = self._store()
            self._open = {}
            if store is not None:
                try:
                    conditions = self.runtime.runner.call_now(store.conditions, self.runtime.spider)
                except StoreError as exc:
                    logger.warning("changewatch: site: the health conditions cannot be read: %s", exc)
                    conditions = []
                self._open = {(c.site, c.condition): c for c in conditions}
        return self._open.get((site_of(url), f"{condition}:{key}"))

    def begin(self, key: str, url: str, condition: str, message: str, *, recheck: bool = False) -> bool:
        """Open *condition* of the site watch *key*: True when it began now (logged once).
        *recheck*: ask the store even when this crawl saw it open (another process of a
        distributed round may have ended it since; the store opens it once)."""
        store = self._store()
        if store is None or (self.opened(key, url, condition) is not None and not recheck):
            return False
        site, name = site_of(url), f"{condition}:{key}"
        now = format_time(clock.now())
        finding = Finding(site, name, True, f"{condition}: site watch {key}: {message}", {"site_watch": key})
        record = {**health_record(self.runtime.spider, finding, now, url), "site_watch": key}
        change_id = self._call(store.open_condition, self.runtime.spider, site, name, now, record,
                               self.runtime.lease)
        assert self._open is not None
        self._open[(site, name)] = OpenCondition(self.runtime.spider, site, name, now, record["error"], change_id)
        if change_id is None:
            return False
        self._pending.append((change_id, record))
        return True

    def end(self, key: str, url: str, condition: str) -> bool:
        """Close *condition* of the site watch *key* when it is open: True when it ended now."""
        store = self._store()
        current = self.opened(key, url, condition) if store is not None else None
        if store is None or current is None:
            return False
        record = {**recovery_record(self.runtime.spider, current, format_time(clock.now()), url), "site_watch": key}
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
            logger.warning("changewatch: site: a health condition cannot be stored: %s", exc)
            return None

    # -- the end of the crawl ---------------------------------------------------------------------

    def _idle(self) -> None:
        if self._task is not None and not self._task.done():
            raise DontCloseSpider
        if self.runtime.failure is not None:
            return
        shared = round_scheduler(self.crawler)
        for key, url in sorted(self.full_checks.items()):
            # in a distributed round, another process may have found one of the site's pages wrong
            wrong = key in self.wrong or (shared is not None and shared.noted(f"{LASTMOD}:{key}"))
            if not wrong and self.end(key, url, LASTMOD):
                logger.info("changewatch: site %s: its sitemap's lastmod proved right again: pages whose lastmod "
                            "did not move are sampled again", key)
        self.full_checks.clear()
        self.wrong.clear()
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
