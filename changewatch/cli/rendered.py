"""``changewatch preview`` of a watch with ``render``: one small Scrapy crawl of that watch, so
that the page is rendered as a crawl renders it (Chromium through scrapy-playwright, every request
of the page answered from a Scrapy fetch under the SSRF guard: docs/rendering.md). Its pipeline
is :class:`PreviewPipeline`, which lets the observation pass instead of comparing it; the crawl's
store is a temporary one, deleted afterwards: nothing is stored. It installs a reactor, so it
runs once per process (as the command does)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from ..pipelines import ChangewatchPipeline
from .common import CommandError

__all__ = ["PreviewPipeline", "rendered_observation"]


class PreviewPipeline(ChangewatchPipeline):
    """Compares nothing and stores nothing: every observation passes through untouched."""

    def observation(self, item: Any) -> None:
        return None


def _settings(settings: Any, store: Path) -> Any:
    settings = settings.copy()
    addons = dict(settings.getdict("ADDONS"))
    if not any(str(path) in ("changewatch.Addon", "changewatch.addon.Addon") for path in addons):
        addons["changewatch.Addon"] = 0
    settings.set("ADDONS", addons, priority="cmdline")
    pipelines = dict(settings.getdict("ITEM_PIPELINES"))
    pipelines.update({"changewatch.pipelines.ChangewatchPipeline": None, f"{__name__}.PreviewPipeline": 790})
    for name, value in (("ITEM_PIPELINES", pipelines), ("CHANGEWATCH_STORE", f"sqlite:///{store}"), ("FEEDS", {}),
                        ("CHANGEWATCH_SCHEDULE_ENABLED", False), ("CHANGEWATCH_WORKERS", 0), ("LOG_LEVEL", "ERROR"),
                        ("TELNETCONSOLE_ENABLED", False)):
        settings.set(name, value, priority="cmdline")
    return settings


def _spider(key: str) -> type[Any]:
    from ..spiders.watch import WatchSpider

    class PreviewSpider(WatchSpider):
        """The watch spider, for the one watch of *key*."""

        def prepare(self, crawler: Any) -> None:
            super().prepare(crawler)
            self.watches = [watch for watch in self.watches if watch.key == key]

    return PreviewSpider


def rendered_observation(watchlist: str, key: str, settings: Any) -> Any:
    """The observation a crawl makes of the watch of *key* in *watchlist* (as ``-a watchlist=``
    takes it), rendered as it asks; a core ``Observation``. CommandError (exit 1) when the crawl
    made none."""
    from scrapy import signals
    from scrapy.crawler import CrawlerProcess

    seen: list[Any] = []

    def scraped(item: Any) -> None:
        seen.append(item)

    with tempfile.TemporaryDirectory(prefix="changewatch-preview-") as folder:
        process = CrawlerProcess(_settings(settings, Path(folder) / "preview.db"))
        crawler = process.create_crawler(_spider(key))
        crawler.signals.connect(scraped, signal=signals.item_scraped)
        process.crawl(crawler, watchlist=watchlist)
        process.start()
        failed = crawler.stats.get_value("changewatch/crawl/failed") if crawler.stats else None
    if not seen:
        why = f": {failed}" if failed else " (the log above says why)"
        raise CommandError(f"the crawl of the rendered page observed nothing{why}", 1)
    from ..items import as_observation

    return as_observation(seen[0])
