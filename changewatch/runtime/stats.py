"""One helper for every changewatch stat: ``changewatch/<component>/<event>`` (docs/stats.md)."""

from __future__ import annotations

from scrapy.crawler import Crawler

__all__ = ["Stats", "stat_name"]


def stat_name(component: str, event: str) -> str:
    return f"changewatch/{component}/{event}"


class Stats:
    """Counts events of one component. The crawler's stats collector is looked up on use: it
    does not exist yet when spiders are built."""

    def __init__(self, crawler: Crawler, component: str):
        self.crawler = crawler
        self.component = component

    def inc(self, event: str, count: int = 1) -> None:
        if self.crawler.stats is not None and count:
            self.crawler.stats.inc_value(stat_name(self.component, event), count)
