"""Calibration (``-a calibrate=N``) and forgetting (``-a forget=KEY``), for the pipeline.

After the normal load of a watch is committed (its baseline, when it is new), N extra loads of
the same request are made one after the other (the next once the last was learned from): never
filtered, never conditional, never skipped by the schedule. Each is judged against the stored
baseline with the calibration option set (the content comparison only learns: core/learned.py),
and its verdict rewrites the key's snapshot only (the key's times, counters and change log are
untouched; nothing is exported). A load that fails, or that a check refuses (a block page, an
empty page), teaches nothing.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from scrapy.crawler import Crawler
from scrapy.exceptions import DropItem
from scrapy.http import Request, Response

from .. import meta
from ..core.comparisons import Kind
from ..core.comparisons.noise import CALIBRATION
from ..core.observation import Observation
from ..runtime.learning import LearningError, forget_learned, parse_calibrate, parse_forget
from ..runtime.offload import Judged
from ..runtime.services import CrawlServices
from ..runtime.spider import spider_options
from ..runtime.stats import Stats
from ..store import SnapshotStore, StoredState, VersionConflict

__all__ = ["Calibration"]

logger = logging.getLogger(__name__)

#: request meta not carried to a calibration load: the normal load's own bookkeeping
_NOT_CARRIED = ("redirect_", "retry_", "download_", "depth", "_changewatch")
_CONDITIONAL_HEADERS = (b"If-None-Match", b"If-Modified-Since")

Judge = Callable[[Observation, StoredState | None, Response | None], Awaitable[Judged]]


class Calibration:
    """The calibration state of one crawl: how many loads per watch, which keys were scheduled,
    which load of each is under way."""

    def __init__(self, crawler: Crawler, runtime: CrawlServices, loads: int, forget: frozenset[str]):
        self.crawler, self.runtime = crawler, runtime
        self.loads, self.forget = loads, forget
        self.stats = Stats(crawler, "calibration")
        self.scheduled: set[str] = set()
        #: key → the number of its calibration load under way
        self.in_flight: dict[str, int] = {}
        #: the request each key's calibration loads are made from
        self.templates: dict[str, Request] = {}

    @classmethod
    def from_crawler(cls, crawler: Crawler, runtime: CrawlServices) -> Calibration:
        """The spider's ``calibrate`` and ``forget`` arguments (a ChangewatchSpider parsed them
        already; any other spider's are parsed here). Raises LearningError for a bad value."""
        spider = crawler.spider
        options = spider_options(spider)
        loads, forget = options.calibrate, options.forget
        return cls(crawler, runtime, parse_calibrate(getattr(spider, "calibrate", None)) if loads is None else loads,
                   parse_forget(getattr(spider, "forget", None)) if forget is None else forget)

    async def forget_keys(self) -> None:
        """Drop what is learned of each ``forget`` key (its baseline stays), before any load. A
        key the store holds no observation of (mistyped, or never observed: nothing is learned of
        it) stops the crawl before anything is fetched."""
        store, spider = self.runtime.runner.store, self.runtime.spider
        for key in sorted(self.forget):
            if await self.runtime.runner.call(store.read, spider, key) is None:
                await self.runtime.cannot_start(
                    f"-a forget={key}: spider {spider!r} has no stored observation of key {key!r} (a mistyped "
                    "key? `changewatch status` lists the keys)")
        for key in sorted(self.forget):
            try:
                parts = await self.runtime.runner.call(forget_learned, store, spider, key, self.runtime.comparisons)
            except LearningError as exc:
                logger.warning("changewatch: forget=%s: nothing to forget: %s", key, exc)
                continue
            if not parts:
                logger.info("changewatch: forget=%s: nothing is learned of its variation", key)
                continue
            self.stats.inc("forgotten")
            logger.info("changewatch: forget=%s: what was learned of its variation is forgotten (%s)", key,
                        ", ".join({"content": "text"}.get(p, p) for p in parts))

    def is_load(self, obs: Observation, request: Request | None) -> bool:
        """Whether *obs* comes from a calibration load (*request*: the one its response answered;
        a failed load has none: it is its key's load under way)."""
        if request is not None:
            return bool(request.meta.get(meta.CALIBRATION))
        return bool(obs.error) and obs.key in self.in_flight

    def schedule(self, obs: Observation, request: Request | None) -> None:
        """After the normal load of *obs*'s key: its calibration loads, once per key and crawl,
        one after the other (each is made once the one before it was learned from: in the order
        they were served, and never two writers of one key)."""
        # a site watch's page set is no page: its pages are calibrated, each as its own key
        if (not self.loads or request is None or obs.error or obs.key in self.scheduled or obs.options.get("site_pages")
                or not isinstance(self.runtime.runner.store, SnapshotStore) or self.crawler.engine is None):
            return
        self.scheduled.add(obs.key)
        request = request.meta.get(meta._ANSWERED, request)  # a 304's stand-in: the spider's request
        carried = {k: v for k, v in request.meta.items()
                   if not k.startswith(_NOT_CARRIED) and k != meta.NOT_MODIFIED}
        headers = request.headers.copy()
        for name in _CONDITIONAL_HEADERS:  # the normal load's may have been conditional (a 304)
            headers.pop(name, None)
        self.templates[obs.key] = request.replace(dont_filter=True, headers=headers,
                                                  meta={**carried, meta.CONDITIONAL: False, meta.SCHEDULE: False})
        self.stats.inc("requests", self.loads)
        self._next(obs.key, 1)

    def _next(self, key: str, number: int) -> None:
        template = self.templates.get(key)
        if template is None or number > self.loads or self.crawler.engine is None or self.runtime.failure:
            self.templates.pop(key, None)
            return
        self.in_flight[key] = number
        self.crawler.engine.crawl(template.replace(meta={**template.meta, meta.CALIBRATION: number}))

    async def learn(self, obs: Observation, response: Response | None, judge: Judge) -> Any:
        """Learn from one calibration load, then make the next; never returns (the item is dropped)."""
        number = self.in_flight.pop(obs.key, self.loads)
        try:
            await self._learn(obs, response, judge)
        finally:
            self._next(obs.key, number + 1)

    async def _learn(self, obs: Observation, response: Response | None, judge: Judge) -> None:
        if obs.error or obs.not_modified:
            self.stats.inc("errors")
            raise DropItem(f"changewatch: {obs.key}: calibration load failed: {obs.error}", log_level="DEBUG")
        obs = dataclasses.replace(obs, options={**obs.options, CALIBRATION: True})
        runner, spider = self.runtime.runner, self.runtime.spider
        for _ in range(20):
            state = await runner.call(runner.store.read, spider, obs.key)
            if state is None or state.snapshot is None:
                self.stats.inc("no_baseline")
                raise DropItem(f"changewatch: {obs.key}: calibration load without a baseline", log_level="DEBUG")
            judged = await judge(obs, state, response)
            if judged.kind is Kind.ERROR:
                self.stats.inc("errors")
                raise DropItem(f"changewatch: {obs.key}: calibration load not learned from: {judged.error}",
                               log_level="DEBUG")
            store = runner.store
            if judged.snapshot is not None and isinstance(store, SnapshotStore):
                try:
                    await runner.call(store.replace_snapshot, spider, obs.key, state.version, judged.snapshot)
                except VersionConflict:
                    continue
            self.stats.inc("loads")
            for event, count in judged.counters.items():
                if event.startswith("calibration/"):
                    self.stats.inc(event.partition("/")[2], count)
            raise DropItem(f"changewatch: {obs.key}: calibration load", log_level="DEBUG")
        raise DropItem(f"changewatch: {obs.key}: calibration load lost to other writers", log_level="DEBUG")
