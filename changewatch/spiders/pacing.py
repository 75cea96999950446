"""Start requests taken as the downloader takes them, not all at once (a crawl's memory
does not grow with its watchlist).

Scrapy's engine reads a spider's ``start()`` in a loop that does not wait while the downloader is
full: every start request of a long watchlist went into the scheduler within the first seconds,
each with its Watch and meta (~1.5 KB), and stayed there until downloaded (measured: 4,500
requests queued after 1,500 of 6,000 pages). The watch spider gives start requests while Scrapy's
scheduler holds fewer than :func:`watermarks`' high mark, then waits, looking again every
:data:`POLL` seconds, until the downloader has taken it down to the low mark: one wait for every
few hundred requests, and never so long that the downloader waits for the spider.

The marks are high for a reason measured, not understood: a scheduler kept short costs Scrapy's
crawl process CPU a page. On the second crawl of 1,500 real pages (three runs each): 16/64
requests 0.2 ms a page more and ~430 pages/s, 32/128 ~449, 64/256 ~476, 128/512 ~485, the same as
unpaced (a wait per request, woken by the ``request_reached_downloader`` signal, was as costly
as 16/64). 512 requests are ~1 MB, whatever the watchlist's length.

Another scheduler (scrapy-redis's, the distributed rounds') is not paced: its queue is shared,
and its length a network round trip.
"""

from __future__ import annotations

import asyncio

from scrapy.core.scheduler import Scheduler
from scrapy.crawler import Crawler

__all__ = ["POLL", "StartPacer", "watermarks"]

#: seconds between two looks at the scheduler while a start request waits
POLL = 0.01


def watermarks(crawler: Crawler) -> tuple[int, int]:
    """(low, high): the scheduler is filled up to *high* requests, and again once the downloader
    has taken it down to *low*: 8 and 32 times what the downloader takes at once (16 at least)."""
    concurrent = max(16, crawler.settings.getint("CONCURRENT_REQUESTS", 16))
    return 8 * concurrent, 32 * concurrent


class StartPacer:
    """``await pacer.room()`` before each start request."""

    def __init__(self, crawler: Crawler):
        self.crawler = crawler
        self.low, self.high = watermarks(crawler)

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
        queued = self.queued()
        if queued is None or queued < self.high:
            return
        while (queued := self.queued()) is not None and queued > self.low:
            await asyncio.sleep(POLL)
