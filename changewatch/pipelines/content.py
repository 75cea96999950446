"""ContentPipeline: normalise the page text and fingerprint it, off the reactor thread."""

from __future__ import annotations

import logging
from typing import Any

from scrapy.crawler import Crawler

from ..core.normalise import RegionError
from ..runtime.config import ChangewatchConfig
from ..runtime.stats import Stats
from ..runtime.tasks import digest_page
from ..runtime.workers import WorkerCrashed, WorkerPool, WorkerTimeout
from .adopt import Adopter

logger = logging.getLogger(__name__)


class ContentPipeline:
    """Visible text → volatile fragments removed → content hash and simhash, computed in a
    worker process (``CHANGEWATCH_WORKERS``) so the crawl itself barely pays for it."""

    def __init__(self, pool: WorkerPool, stats: Stats, adopt: Adopter):
        self.pool = pool
        self.stats = stats
        self.adopt = adopt

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ContentPipeline:
        config = ChangewatchConfig.from_settings(crawler.settings)
        return cls(WorkerPool(config.workers), Stats(crawler, "content"), Adopter.of(crawler))

    def open_spider(self) -> None:
        self.pool.start()

    def close_spider(self) -> None:
        self.pool.stop()

    async def process_item(self, item: Any) -> Any:
        obs = self.adopt(item)
        if obs is None or obs.error is not None or obs.not_modified or (obs.html is None and obs.text is None):
            return item if obs is None else obs
        sort_lines = bool(obs.options.get("sort_lines", False))
        try:
            snapshot, error = await digest_page(self.pool, obs.html, obs.text, obs.region, sort_lines)
        except RegionError as exc:
            obs.error = f"region: {exc}"
            self.stats.inc("bad_region")
            return obs
        except (WorkerTimeout, WorkerCrashed) as exc:
            # An error record, not a crash of the crawl: the baseline stays as it was.
            obs.error = f"unprocessable: {_what_happened(exc, self.pool.task_timeout)}"
            self.stats.inc("unprocessable")
            logger.debug("Could not normalise %s: %s", obs.url, exc)  # the pool warned already
            return obs
        obs.digest["text"] = snapshot
        if error is not None:
            obs.error = error
            self.stats.inc("unobservable")
        # The page is no longer needed: free it before the item waits for the store.
        obs.html = None
        obs.text = None
        self.stats.inc("digested")
        return obs


def _what_happened(exc: WorkerTimeout | WorkerCrashed, timeout: float) -> str:
    if isinstance(exc, WorkerTimeout):
        return f"normalising took longer than {timeout:g} s; the worker was replaced"
    return f"the worker normalising the page died ({exc}); it was replaced"
