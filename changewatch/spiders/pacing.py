"""Start requests taken as the downloader takes them, not all at once (issue 10: a crawl's memory
does not grow with its watchlist).

Scrapy's engine reads a spider's ``start()`` in a loop that does not wait while the downloader is
full: every start request of a long watchlist went into the scheduler within the first seconds,
each with its Watch and meta (~1.5 KB), and stayed there until downloaded (measured: 4,500
requests queued after 1,500 of 6,000 pages). The watch spider waits instead, before each start
request, while Scrapy's own scheduler already holds :func:`lookahead` requests: enough that the
downloader never waits for the spider. It wakes when a request moves to the downloader (the
``request_reached_downloader`` signal), and looks again at least every second whatever happens.

Another scheduler (scrapy-redis's, the distributed rounds') is not paced: its queue is shared,
and its length a network round trip.
"""

from __future__ import annotations

import asyncio
from typing import Any

from scrapy import signals
from scrapy.core.scheduler import Scheduler
from scrapy.crawler import Crawler

__all__ = ["StartPacer", "lookahead"]

#: seconds between two looks at the scheduler when no request moved (a wake-up that never came)
_LOOK_AGAIN = 1.0


def lookahead(crawler: Crawler) -> int:
    """How many requests the scheduler may hold before the next start request: twice what the
    downloader takes at once (at least 32)."""
    return max(32, 2 * crawler.settings.getint("CONCURRENT_REQUESTS", 16))


class StartPacer:
    """``await pacer.room()`` before each start request."""

    def __init__(self, crawler: Crawler):
        self.crawler = crawler
        self.ahead = lookahead(crawler)
        self._moved = asyncio.Event()
        crawler.signals.connect(self._wake, signal=signals.request_reached_downloader, weak=False)

    def _wake(self, *args: Any, **kwargs: Any) -> None:
        self._moved.set()

    def queued(self) -> int | None:
        """What Scrapy's scheduler holds (None: another scheduler, or none yet: not paced)."""
        try:
            engine = self.crawler.engine
        except RuntimeError:  # Scrapy 2.19: not set yet (start() read outside a crawl)
            return None
        scheduler = getattr(engine, "scheduler", None)  # Scrapy 2.19
        if scheduler is None:
            scheduler = getattr(getattr(engine, "_slot", None), "scheduler", None)
        return len(scheduler) if isinstance(scheduler, Scheduler) else None

    async def room(self) -> None:
        while (queued := self.queued()) is not None and queued >= self.ahead:
            self._moved.clear()
            # a timer rather than asyncio.wait_for, which makes a task of each wait (~10 µs a
            # start request, measured in bench/bench_crawl.py)
            again = asyncio.get_running_loop().call_later(_LOOK_AGAIN, self._moved.set)
            try:
                await self._moved.wait()
            finally:
                again.cancel()
