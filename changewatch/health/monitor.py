"""``HealthMonitor``: the extension that runs the health check when a crawl has done its work.

On ``spider_idle``, after this process committed observations since its last check, it keeps
the spider open (``DontCloseSpider``), runs the check from the stored history (journal.py, on the
store's thread), and sends each health record it logged through the item pipelines as a change
(feeds, delivery confirmation, redelivery: as any change). Then it lets the spider close. A crawl
that stops early (an error, Ctrl-C, CLOSESPIDER_*) is not checked; the next one is. A spider that
goes idle many times (scrapy-redis) is checked each time it has committed something since.
"""

from __future__ import annotations

import asyncio
import logging

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.exceptions import DontCloseSpider, NotConfigured

from ..config import ChangewatchConfig
from ..runtime.services import CrawlServices
from ..runtime.stats import Stats
from ..store import StoreError
from ..store.health import HealthStore
from ..store.semantics import parse_time
from .activity import Activity
from .check import HealthThresholds
from .journal import CheckResult, condition_class, run_check

__all__ = ["HealthMonitor"]

logger = logging.getLogger(__name__)


class HealthMonitor:
    """Extension (``EXTENSIONS``; the add-on enables it). ``CHANGEWATCH_HEALTH_ENABLED = False``
    turns it off; the history is counted by every commit either way."""

    def __init__(self, crawler: Crawler, limits: HealthThresholds):
        self.crawler = crawler
        self.limits = limits
        self.stats = Stats(crawler, "health")
        self._task: asyncio.Task[None] | None = None
        self._unsupported = False

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> HealthMonitor:
        config = ChangewatchConfig.from_settings(crawler.settings)
        if not config.health_enabled:
            raise NotConfigured("CHANGEWATCH_HEALTH_ENABLED is False")
        limits = HealthThresholds(recent=config.health_recent, baseline=config.health_baseline,
                                  min_observations=config.health_min_observations,
                                  stale_after=config.health_stale_after)
        monitor = cls(crawler, limits)
        crawler.signals.connect(monitor._idle, signal=signals.spider_idle)
        return monitor

    @property
    def runtime(self) -> CrawlServices:
        # looked up on use: extensions cannot find each other while they are being built
        return CrawlServices.of(self.crawler)

    @property
    def activity(self) -> Activity:
        activity = self.runtime.activity
        assert isinstance(activity, Activity)  # changewatch.addon.ChangewatchRuntime sets it
        return activity

    def _idle(self) -> None:
        if self._task is not None and not self._task.done():
            raise DontCloseSpider
        activity = self.activity
        if activity.commits == 0 or activity.latest is None or self.runtime.failure is not None:
            return
        if not isinstance(self.runtime.runner.store, HealthStore):
            if not self._unsupported:
                self._unsupported = True
                logger.warning("changewatch: the store %s keeps no health history (it does not implement "
                               "changewatch.store.health.HealthStore): the watcher's health is not checked",
                               self.runtime.runner.store)
            return
        self._task = asyncio.ensure_future(self._check())
        raise DontCloseSpider

    async def _check(self) -> None:
        activity = self.activity
        activity.declared(self.crawler.spider)
        now = parse_time(activity.latest or "")
        sites, canaries = dict(activity.sites), dict(activity.canaries)
        activity.commits = 0
        try:
            try:
                result: CheckResult = await self.runtime.runner.call(
                    run_check, self.runtime.runner.store, self.runtime.spider, now, self.limits, sites, canaries,
                    self.runtime.lease)
            except StoreError as exc:
                self.runtime.fail(f"the store cannot be written: {exc}")
                return
            except Exception as exc:  # a bug of ours: said, and the crawl exits non-zero, never silently 0
                logger.exception("changewatch: the health check failed")
                self.runtime.fail(f"the health check failed: {exc!r}")
                return
            self._report(result)
            engine = self.crawler.engine
            for logged in result.logged:
                if engine is None or self.runtime.failure is not None:
                    return  # logged and leased: the next run with a feed exports it
                await engine.scraper.start_itemproc_async({**logged.record, "change_id": logged.change_id},
                                                          response=None)
        finally:
            self._wake()

    def _report(self, result: CheckResult) -> None:
        self.stats.inc("checks")
        if result.rows == 0:
            self.stats.inc("no_history")
            logger.info("changewatch: health: no history to judge %s's sites by yet", self.runtime.spider)
        self.stats.inc("holding", len(result.holding))
        for logged in result.logged:
            health = logged.record["health"]
            if logged.record["kind"] == "recovered":
                self.stats.inc("recovered")
                logger.info("changewatch: health: %s of %s is over (was: %s)", health["condition"],
                            logged.record["key"], health["recovered_from"])
            else:
                self.stats.inc("warned")
                logger.warning("changewatch: %s", logged.record["error"])
        new = {logged.record.get("error") for logged in result.logged}
        for finding in result.holding:
            self.stats.inc(condition_class(finding))
            if f"health: {finding.message}" not in new:
                logger.info("changewatch: health: still so: %s", finding.message)

    def _wake(self) -> None:
        """Let the engine see at once that the spider is idle again (else its 5-second heartbeat
        would). Scrapy has no public call for it: without the slot, the heartbeat does it."""
        slot = getattr(self.crawler.engine, "_slot", None)
        nextcall = getattr(slot, "nextcall", None)
        if nextcall is not None:
            nextcall.schedule()
