"""The generic ``watch`` spider: a watchlist file in, change records out. No code to write."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

import scrapy
from scrapy.crawler import Crawler
from scrapy.http import Request, Response

from .. import meta
from ..config import ChangewatchConfig
from ..core.addresses import AddressPolicy
from ..core.siteset import REBASELINE
from ..extract.observe import moved_from
from ..extract.page import count_undecodable_page
from ..extract.watch import observe_page
from ..guard.fetch import FetchError, fetch_once
from ..items import Observation
from ..render.browser import find_browser, how_to_install
from ..runtime.spider import Canaries
from ..spider import ChangewatchSpider
from ..watchlist import (
    Fetched,
    FetchFailed,
    FetchWatchlist,
    Watch,
    Watchlist,
    WatchlistError,
    WatchlistSource,
    is_fetched,
    open_watchlist,
)
from .pacing import StartPacer
from .site import FRESH, SiteCrawler

__all__ = ["WatchSpider", "guarded_fetch", "watchlist_source"]

logger = logging.getLogger(__name__)

#: the event loop gets a turn after this many start requests
START_YIELD_EVERY = 32


def guarded_fetch(policy: AddressPolicy, *, timeout: float, max_bytes: int,
                  user_agent: str = "changewatch") -> FetchWatchlist:
    """A watchlist URL's fetch under the SSRF guard's *policy*, within *timeout* and *max_bytes*."""

    def fetch(url: str) -> Fetched:
        try:
            fetched = fetch_once(url, policy, timeout=timeout, max_bytes=max_bytes, user_agent=user_agent)
        except FetchError as exc:
            raise FetchFailed(str(exc)) from None
        return Fetched(fetched.url, fetched.body, fetched.content_type)

    return fetch


def watchlist_source(config: ChangewatchConfig, user_agent: str = "changewatch") -> WatchlistSource:
    """How ``-a watchlist=`` is read: relative paths from ``CHANGEWATCH_WATCHLIST_DIR``; URLs
    fetched under the SSRF guard's policy, within ``CHANGEWATCH_WATCHLIST_TIMEOUT`` and
    ``CHANGEWATCH_WATCHLIST_MAXSIZE``, with *user_agent* (the crawl's)."""
    return WatchlistSource(config.watchlist_dir, guarded_fetch(
        config.guard.policy, timeout=config.watchlist_timeout, max_bytes=config.watchlist_maxsize,
        user_agent=user_agent))


class WatchSpider(ChangewatchSpider):
    """``scrapy crawl watch -a watchlist=watchlist.yaml -O changes.jsonl``; the watchlist may also
    be an http(s) URL or inline JSON (:mod:`changewatch.watchlist.sources`)."""

    name = "watch"
    stats_component = "watch"
    #: the watchlist's watches, read again from their spool on each iteration (a list in tests)
    watches: Watchlist | list[Watch]
    #: the watchlist came from an http(s) URL: its notify destinations go through the SSRF guard
    watchlist_fetched: bool = False
    _renders: bool = False
    _sites: SiteCrawler | None = None

    def __init__(self, watchlist: str | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.watchlist = watchlist or ""  # none: prepare says so and the crawl stops
        self.watches = []

    @property
    def changewatch_listed(self) -> int:
        """How many watches the watchlist has (the progress line's total)."""
        return len(self.watches)

    @property
    def changewatch_renders(self) -> bool:
        """Some watch is rendered in a browser (RenderMiddleware)."""
        return self._renders

    def prepare(self, crawler: Crawler) -> None:
        # Read and validated here, before the engine starts: a bad or unreachable watchlist stops
        # the crawl (exit status 1) before anything is fetched or stored.
        config = ChangewatchConfig.from_settings(crawler.settings)
        try:
            if not self.watchlist:
                raise WatchlistError("the watch spider needs a watchlist: scrapy crawl watch -a watchlist=FILE "
                                     "(a path, an http(s) URL or inline JSON)")
            # read watch by watch and kept on disk: the crawl's memory does not grow with the watchlist
            source = watchlist_source(config, crawler.settings.get("USER_AGENT") or "changewatch")
            watches = open_watchlist(self.watchlist, source)
            self.watches = watches
            self._renders = watches.renders
            if self._renders and find_browser(config.render_browser) is None:
                raise WatchlistError(f"watches with render need a browser and there is none: {how_to_install()}")
            self.watchlist_fetched = is_fetched(self.watchlist)
        except WatchlistError as exc:
            self.watches = []
            self.refuse_start(exc)

    def refuse_start(self, problem: Exception) -> None:
        if not isinstance(problem, WatchlistError):
            super().refuse_start(problem)
            return
        logger.error("The watch spider cannot start: %s", problem)
        self._start_problem = problem
        self.changewatch_cannot_start = f"the watchlist cannot be used: {problem}"

    def changewatch_canaries(self) -> Canaries:
        """The watchlist's canaries (docs/health.md), for the health check: key → (url, declaration)."""
        if isinstance(self.watches, Watchlist):
            return dict(self.watches.canaries)  # known since it was read: its spool is not read again
        return {w.key: (w.url, {"expect": w.canary[0], "within": w.canary[1]}) for w in self.watches if w.canary}

    async def start(self) -> AsyncIterator[Any]:
        if self.changewatch_cannot_start:
            return
        pacer = StartPacer(self.crawler)
        for n, watch in enumerate(self.watches, 1):
            if n % START_YIELD_EVERY == 0:
                # While the downloader is full, Scrapy's engine takes start requests in a tight
                # loop: without a pause, a long watchlist (and a scheduler that talks to Redis per
                # request) would be queued whole before the first downloads move on.
                await asyncio.sleep(0)
            await pacer.room()
            if watch.site is not None:  # its discovery, or its last good set's pages (spiders/site.py)
                async for request in self.sites.start(watch):
                    await pacer.room()
                    yield request
                continue
            yield self.watch_request(watch)

    @property
    def sites(self) -> SiteCrawler:
        """The crawl's site watches (built on first use)."""
        if self._sites is None:
            self._sites = SiteCrawler(self)
        return self._sites

    def watch_request(self, watch: Watch) -> Request:
        """The request of *watch*'s page: its key, specs, schedule, vantage point and rendering in meta."""
        request_meta: dict[str, Any] = {meta.WATCH: watch, meta.KEY: watch.key,
                                        meta.CONDITIONAL: watch.conditional, meta.SPEC: watch.spec()}
        if watch.every is not None:  # the ScheduleMiddleware drops it until it is due
            request_meta[meta.EVERY] = watch.every
        if watch.vantage:  # the VantageMiddleware pins proxy, language, cookies and headers
            request_meta[meta.VANTAGE] = watch.vantage
        if not watch.confirm:  # a change is reported from one load
            request_meta[meta.CONFIRM] = False
        if watch.render is not None:  # the RenderMiddleware renders it, or re-checks it first
            request_meta[meta.RENDER] = watch.render
        return scrapy.Request(watch.url, callback=self.parse_watch, errback=self.observation_failed,
                              dont_filter=True, meta=request_meta)

    def parse_watch(self, response: Response) -> list[Observation]:
        # A list, not a generator: for a generator callback Scrapy reads its source and parses it
        # (inspect.getsource, ast.parse) to warn of a return value, and its cache of that answer
        # holds the bound method weakly: the answer was worked out again for many responses
        # (0.06 to 0.2 ms a page in the crawl process, bench/bench_crawl.py's profile).
        watch: Watch = response.meta[meta.WATCH]
        obs, page = observe_page(watch, response)
        # Page.observe notes it; so does any other way a watch's response is read (JSON, feeds…)
        obs.moved_from = obs.moved_from or moved_from(response)
        obs.site_watch = watch.site_watch
        if response.meta.get(FRESH):  # a page just added to its site's set: a fresh, silent baseline
            obs.options[REBASELINE] = True
        if page is not None:
            self.cw_stats.inc("jsonld_invalid_blocks", page.invalid_jsonld_blocks)
            count_undecodable_page(self.crawler, page)
        if not response.meta.get(meta.CONFIRMATION):  # a second load (a confirmation, a baseline's) is no observation
            self.cw_stats.inc("error" if obs.error else "observed")
        return [obs]

    def failed_observation(self, request: Request, url: str, error: str) -> Observation:
        watch: Watch = request.meta[meta.WATCH]
        return Observation(key=watch.key, url=url, options=watch.options(), error=error, site_watch=watch.site_watch)
