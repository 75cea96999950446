"""A site watch's two health conditions (docs/sites.md, docs/health.md), kept as every watch's
own (:class:`changewatch.health.keyed.KeyHealth`): logged once when it begins and once when it
ends, and sent through the item pipelines before the spider closes.

- ``lastmod:KEY``: the site watch KEY's sitemap ``<lastmod>`` proved wrong (a page changed while
  its lastmod did not move). While it is open every listed page is checked each run; a run that
  checked every page and found none wrong ends it.
- ``max_pages:KEY``: the site watch KEY found more pages than its ``max_pages``; a discovery
  within the bound ends it.

The condition's ``site`` is the host of the site watch's URL, as for every health condition; the
record's ``site_watch`` is the site watch's key.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ..distributed import round_scheduler
from ..health.keyed import KeyHealth

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = ["LASTMOD", "MAX_PAGES", "SiteHealth"]

logger = logging.getLogger(__name__)

LASTMOD = "lastmod"
MAX_PAGES = "max_pages"


class SiteHealth(KeyHealth):
    """The site watches' health conditions of one crawl."""

    def __init__(self, crawler: Crawler):
        super().__init__(crawler)
        #: site watch key → its URL, for the sites whose lastmod a run checks on every page
        self.full_checks: dict[str, str] = {}
        #: site watch keys whose lastmod proved wrong in this crawl
        self.wrong: set[str] = set()

    def begin(self, key: str, url: str, condition: str, message: str,  # type: ignore[override]
              *, recheck: bool = False) -> bool:
        """Open *condition* (``lastmod`` or ``max_pages``) of the site watch *key*: True when it began now."""
        return super().begin(key, url, condition, f"{condition}: site watch {key}: {message}", {"site_watch": key},
                             recheck=recheck)

    def end(self, key: str, url: str, condition: str) -> bool:  # type: ignore[override]
        """Close *condition* of the site watch *key* when it is open: True when it ended now."""
        return super().end(key, url, condition, {"site_watch": key})

    def _idle(self) -> None:
        if self._task is None or self._task.done():
            if self.runtime.failure is not None:
                return
            shared = round_scheduler(self.crawler)
            for key, url in sorted(self.full_checks.items()):
                # in a distributed round, another process may have found one of the site's pages wrong
                wrong = key in self.wrong or (shared is not None and shared.noted(f"{LASTMOD}:{key}"))
                if not wrong and self.end(key, url, LASTMOD):
                    logger.info("changewatch: site %s: its sitemap's lastmod proved right again: pages whose "
                                "lastmod did not move are sampled again", key)
            self.full_checks.clear()
            self.wrong.clear()
        super()._idle()
