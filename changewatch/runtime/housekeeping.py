"""Retention and forgetting (docs/evidence.md), once per run, after a crawl that finished: keys
still watched but not fetched (not due) are noted as listed; keys neither fetched nor listed for
``CHANGEWATCH_FORGET_AFTER`` are forgotten; kept versions older than
``CHANGEWATCH_EVIDENCE_RETENTION`` are deleted (each key's latest stays: its next change is judged
against it), with the bodies no other version refers to; delivered changes older than
``CHANGEWATCH_CHANGES_RETENTION`` are deleted (an undelivered one never is).

Each step deletes at most :data:`BATCH` rows per transaction, each its own short store call
between which the crawl's other work goes on; nothing here runs inside an observation's
transaction. A crawl that stopped early (an error, a limit, Ctrl-C) purges nothing: what it did
not reach may only not have been reached."""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import TYPE_CHECKING

from ..core import clock
from ..store import MaintainedStore, StoreError
from ..store.semantics import format_time
from ..store.upkeep import BODY_WINDOW
from .stats import Stats

if TYPE_CHECKING:
    from .services import CrawlServices

__all__ = ["BATCH", "Housekeeper"]

logger = logging.getLogger(__name__)

#: rows deleted (or keys noted) per transaction
BATCH = 500
#: each purge's stat (changewatch/housekeeping/<event>), in the order they run
_PURGE_STATS = {"forget": "forgotten", "evidence": "evidence_purged", "changes": "changes_purged"}


class Housekeeper:
    """The runtime's once-a-run purge. :attr:`listed`: keys the schedule skipped this run (still
    watched), which the schedule middleware fills."""

    def __init__(self, runtime: CrawlServices):
        self.runtime = runtime
        crawler = runtime.crawler
        self.stats = Stats(crawler, "housekeeping")
        self.listed: set[str] = set()

    async def closed(self, reason: str) -> None:
        """On spider_closed: the purge, when the crawl finished and its store is a MaintainedStore."""
        runtime = self.runtime
        if reason != "finished" or runtime.failure is not None or not runtime.is_open or os.environ.get("SCRAPY_CHECK"):
            return
        store = runtime.runner.store
        if not isinstance(store, MaintainedStore):
            logger.warning("changewatch: the store %r cannot purge (it lacks changewatch.store.MaintainedStore): "
                           "evidence, changes and forgotten keys are kept for ever", store)
            return
        try:
            await self._purge(store)
        except StoreError as exc:  # nothing was lost: the next run purges again
            logger.error("changewatch: housekeeping stopped: %s", exc)
            self.stats.inc("failed")

    async def _purge(self, store: MaintainedStore) -> None:
        runner, config, spider = self.runtime.runner, self.runtime.config, self.runtime.spider
        # the earlier of the store's clock (every writer's fetch times are clamped to it) and the
        # crawl's: a machine whose clock runs ahead must not purge what is not old yet
        now = min(await runner.call(runner.store.now), clock.now())
        listed = sorted(self.listed)
        for start in range(0, len(listed), BATCH):
            await runner.call(store.mark_listed, spider, listed[start:start + BATCH], format_time(now))
        self.stats.inc("listed", len(listed))

        def before(seconds: float) -> str:
            return format_time(now - timedelta(seconds=seconds))

        bodies_before = before(BODY_WINDOW)

        async def forget(cutoff: str) -> int:
            keys = await runner.call(store.forget, spider, cutoff, BATCH, bodies_before)
            if keys:
                logger.debug("changewatch: forgot %d key(s) no longer watched: %s", len(keys), ", ".join(keys))
            return len(keys)

        steps: dict[str, tuple[float | None, Callable[[str], Awaitable[int]]]] = {
            "forget": (config.forget_after, forget),
            "evidence": (config.evidence_retention,
                         lambda cutoff: runner.call(store.purge_evidence, spider, cutoff, BATCH, bodies_before)),
            "changes": (config.changes_retention,
                        lambda cutoff: runner.call(store.purge_changes, spider, cutoff, BATCH)),
        }
        done: dict[str, int] = {}
        for name, (age, step) in steps.items():
            if age is not None:
                done[_PURGE_STATS[name]] = count = await self._batches(step, before(age))
                self.stats.inc(_PURGE_STATS[name], count)
        if any(done.values()):
            summary = ", ".join(f"{count} {event.replace('_', ' ')}" for event, count in done.items())
            logger.info("changewatch: housekeeping: %s", summary)

    @staticmethod
    async def _batches(step: Callable[[str], Awaitable[int]], cutoff: str) -> int:
        """Run *step* (a store call deleting at most BATCH rows) until it deletes fewer; the total."""
        total = 0
        while True:
            count = await step(cutoff)
            total += count
            if count < BATCH:
                return total
            await asyncio.sleep(0)  # a turn for the rest of the crawl's closing between batches
