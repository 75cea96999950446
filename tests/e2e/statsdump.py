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
        path = crawler.settings.get("CHANGEWATCH_TEST_STATS_FILE")
        if not path:
            raise NotConfigured("no CHANGEWATCH_TEST_STATS_FILE")
        ext = cls(crawler, path)
        # engine_stopped: after the feeds (and what listens to their closing) are done
        crawler.signals.connect(ext.closed, signal=signals.engine_stopped)
        return ext

    def closed(self) -> None:
        assert self.crawler.stats is not None
        self.path.write_text(json.dumps(self.crawler.stats.get_stats(), default=str))
