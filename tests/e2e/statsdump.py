"""A test-only extension: write the crawl's final stats to a JSON file for the assertions."""

from __future__ import annotations

import json
from pathlib import Path

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured


class StatsDump:
    def __init__(self, crawler: Crawler, path: str):
        self.crawler = crawler
        self.path = Path(path)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> StatsDump:
        path = crawler.settings.get("TESTS_STATS_FILE")
        if not path:
            raise NotConfigured("no TESTS_STATS_FILE")
        ext = cls(crawler, path)
        # engine_stopped: after the feeds (and what listens to their closing) are done
        crawler.signals.connect(ext.closed, signal=signals.engine_stopped)
        return ext

    def closed(self) -> None:
        assert self.crawler.stats is not None
        self.path.write_text(json.dumps(self.crawler.stats.get_stats(), default=str))


class SimulatedClock:
    """A test-only extension: the crawl runs at ``TESTS_NOW`` (an ISO 8601 time), its
    clock moving on from there as the real one does (changewatch.core.clock), so that a test can
    crawl days apart without waiting for them. The store keeps its own clock: a simulated time in
    the past is never clamped."""

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SimulatedClock:
        start = crawler.settings.get("TESTS_NOW")
        if not start:
            raise NotConfigured("no TESTS_NOW")
        import time
        from datetime import UTC, datetime, timedelta

        from changewatch.core import clock

        origin = datetime.fromisoformat(start).astimezone(UTC)
        began = time.monotonic()
        clock.set_clock(lambda: origin + timedelta(seconds=time.monotonic() - began))
        return cls()
