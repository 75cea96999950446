"""``ProgressLog``: one INFO line every ``CHANGEWATCH_PROGRESS_INTERVAL`` on a long run, beside
Scrapy's LogStats (which it replaces nothing of): watches done (of how many, when the spider
knows), changes and errors so far, and the watches the schedule skipped.

    changewatch: progress: 1204/10000 watches done (12%), 3 changes, 1 error; 2500 not due, skipped
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from typing import Any

from scrapy import signals
from scrapy.crawler import Crawler

from ..config import ChangewatchConfig
from ..core.comparisons import Kind
from .spider import spider_options
from .stats import stat_name

__all__ = ["ProgressLog", "progress_line"]

logger = logging.getLogger(__name__)

_DONE = (*(stat_name("commit", kind.value) for kind in Kind), stat_name("commit", "stale"))
_CHANGES = tuple(stat_name("commit", kind.value) for kind in Kind if kind.changes_page)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def progress_line(stats: Mapping[str, Any], listed: int | None) -> str:
    """The progress line for a crawl's *stats*, *listed* being how many watches the spider has
    (None: it does not know, a per-site spider).

    >>> progress_line({"changewatch/commit/none": 8, "changewatch/commit/field": 2,
    ...                "changewatch/commit/error": 1, "changewatch/schedule/skipped": 9}, 20)
    'progress: 11/11 watches done (100%), 2 changes, 1 error; 9 not due, skipped'
    >>> progress_line({}, None)
    'progress: 0 watches done, 0 changes, 0 errors'
    """
    done = sum(int(stats.get(name, 0)) for name in _DONE)
    changes = sum(int(stats.get(name, 0)) for name in _CHANGES)
    errors = int(stats.get(stat_name("commit", "error"), 0))
    skipped = int(stats.get(stat_name("schedule", "skipped"), 0))
    if listed is not None:
        total = max(listed - skipped, done)
        share = f" ({100 * done // total}%)" if total else ""
        head = f"{done}/{total} watches done{share}"
    else:
        head = f"{done} watches done"
    tail = f"; {skipped} not due, skipped" if skipped else ""
    return f"progress: {head}, {_plural(changes, 'change')}, {_plural(errors, 'error')}{tail}"


class ProgressLog:
    """Extension (``changewatch.Addon`` enables it): the progress line, every
    ``CHANGEWATCH_PROGRESS_INTERVAL`` seconds from the spider's opening to its closing (0: never)."""

    def __init__(self, crawler: Crawler, interval: float):
        self.crawler = crawler
        self.interval = interval
        self._task: asyncio.Task[None] | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ProgressLog:
        # built beside the runtime, before get_extension can find it: the settings are read the same way
        extension = cls(crawler, ChangewatchConfig.from_settings(crawler.settings).progress_interval)
        crawler.signals.connect(extension._opened, signal=signals.spider_opened)
        crawler.signals.connect(extension._closed, signal=signals.spider_closed)
        return extension

    def _opened(self) -> None:
        if self.interval > 0:
            self._task = asyncio.ensure_future(self._loop())

    async def _loop(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            self.log()

    def log(self) -> None:
        if self.crawler.stats is None:
            return
        listed = spider_options(self.crawler.spider).listed
        logger.info("changewatch: %s", progress_line(self.crawler.stats.get_stats(), listed))

    async def _closed(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
