"""Site watches in the ``watch`` spider: a site's page set found from its sitemap or by following
its links, judged against its stored rows (:mod:`.site_set`) as an observation of the site watch's
key, and each page observed as an ordinary watch of its own
(:func:`changewatch.watchlist.site.page_watch`).

Every discovery request goes through Scrapy's downloader middlewares as any other: the SSRF
guard, robots.txt, retries, redirects. Sitemaps are read whole or not at all
(:mod:`changewatch.core.sitemaps`); what the crawl puts in the set, and which listed pages it
leaves alone by their ``<lastmod>``, is decided in :mod:`changewatch.core.siteset`. A discovery
that cannot be trusted (a sitemap that is HTML, truncated, too large, empty; a start page that is
a block page; a loss not confirmed) is an ``error`` of the site watch's key: the set keeps its
last good baseline and its pages are still observed.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any

from scrapy import Request, signals
from scrapy.http import Response
from twisted.python.failure import Failure

from .. import meta
from ..core import clock
from ..core.schedule import DueEntry
from ..core.sitemaps import MAX_CHILD_SITEMAPS, MAX_INDEX_DEPTH, MAX_SITEMAP_BYTES, SitemapError
from ..core.siteset import PageSetDelta, loss_confirmed, page_plan, shrunk
from ..core.urls import canonical_url
from ..distributed import round_scheduler
from ..extract.observe import describe_failure
from ..extract.sitemaps import read_sitemap
from ..guard import reports_refusals
from ..items import Observation
from ..runtime.services import CrawlServices
from ..runtime.stats import Stats
from ..store import StoreError
from ..store.semantics import parse_time
from ..watchlist.site import SiteSpec, page_watch
from .pacing import StartPacer
from .site_health import LASTMOD, MAX_PAGES, SiteHealth
from .site_links import LinkMode
from .site_run import RUN, SiteRun
from .site_set import ListedPages, Listing, SetRead, StoredPages, merged

if TYPE_CHECKING:
    from ..watchlist import Watch
    from .watch import WatchSpider

__all__ = ["FRESH", "SiteCrawler", "SiteRun"]

logger = logging.getLogger(__name__)

#: meta on a page fetched though its lastmod did not move: the site watch's key (private)
_CHECKED = "_changewatch_site_checked"
#: meta on a page fetched though its lastmod did not move: the site watch's URL (private)
_SITE_URL = "_changewatch_site_url"
#: meta on a page just added to the set: its first observation is a silent baseline (private)
FRESH = "_changewatch_site_fresh"
#: sitemaps (or missing pages) fetched at once while a sitemap tree is read
_AT_ONCE = 8
#: missing pages fetched to confirm a sudden loss
_LOSS_SAMPLE = 5
#: a page request's due state not read with the set: the schedule looks it up (private)
_UNREAD = object()


class SiteCrawler(LinkMode):
    """The site watches of one crawl of the ``watch`` spider."""

    def __init__(self, spider: WatchSpider):
        self.spider = spider
        self.crawler = spider.crawler
        self.stats = Stats(spider.crawler, "site")
        self.health = SiteHealth(spider.crawler)
        self.crawler.signals.connect(self._scraped, signal=signals.item_scraped)

    @property
    def runtime(self) -> CrawlServices:
        return CrawlServices.of(self.crawler)

    # -- the start ----------------------------------------------------------------------------------

    async def start(self, watch: Watch) -> AsyncIterator[Request]:
        """The requests a site watch starts with: its discovery, or, when its set is not due to be
        discovered again (``site.every``), its last good set's pages."""
        spec = watch.site
        assert spec is not None
        state = await self._state(watch.key)
        stored = StoredPages(self.runtime, watch.key)
        stored_spec = await self._stored_spec(stored)
        run = SiteRun(watch, spec, stored, stored_spec is not None, stored_spec in (None, self.spec_of(spec)))
        if spec.sitemap is None and run.has_set:
            run.previous = await stored.urls()
        since = parse_time(state.last_seen).timestamp() if state is not None and state.last_seen else None
        run.trusted = self._trusted(run)
        run.turn = sum(state.counters.values()) if state is not None else 0
        if (spec.every is not None and run.has_set and since is not None and not self.runtime.force
                and clock.now().timestamp() - since < spec.every):
            # decided alike by every process of a distributed round: counted by the first
            shared = round_scheduler(self.crawler)
            if shared is None or shared.first_to(f"not_due:{watch.key}", spec.url):
                self.stats.inc("discovery_not_due")
            async for request in self._stored_requests(run):
                yield request
            return
        # a distributed round's process that claims the site reads its sitemap or follows its links
        # whole: its callbacks and this run's state are this process's (changewatch.distributed)
        common = {RUN: run, meta.CONDITIONAL: False, meta.SCHEDULE: False, meta._ROUND_UNIT: watch.key}
        if spec.sitemap is not None:
            yield Request(spec.sitemap, callback=self.sitemap_read, errback=self.sitemap_failed, dont_filter=True,
                          meta={**common, "download_maxsize": MAX_SITEMAP_BYTES, meta._ROUND_SHARES: True})
            return
        for url in spec.start:
            run.seen.add(canonical_url(url))
            run.pending += 1
            yield self._link_request(run, url, 0)

    async def _state(self, key: str) -> Any:
        runtime = self.runtime
        await runtime.open()
        try:
            return await runtime.runner.call(runtime.runner.store.read, runtime.spider, key)
        except StoreError as exc:
            runtime.fail(f"the store cannot be read: {exc}")
            return None

    async def _stored_spec(self, stored: StoredPages) -> str | None:
        try:
            return await stored.spec()
        except StoreError as exc:
            self.runtime.fail(f"the store cannot be read: {exc}")
            return None

    def new_spec(self, run: SiteRun) -> str | None:
        """The spec to store with the set: this run's, when the stored set was chosen otherwise."""
        return self.spec_of(run.spec) if run.afresh else None

    @staticmethod
    def spec_of(spec: SiteSpec) -> str:
        """How a set is chosen: another ``max_pages`` is another set, which starts afresh (the
        pages it lets in are not ``added``, those it leaves out not ``removed``)."""
        return f"max_pages={spec.max_pages}"

    async def _stored_requests(self, run: SiteRun) -> AsyncIterator[Request]:
        """A request for each page of the stored set (the set is not discovered this run)."""
        pacer = StartPacer(self.crawler)
        try:
            async for rows in run.stored.batches():
                for url, entry in rows:
                    await pacer.room()
                    yield self.page_request(run, url, entry=entry)
        except StoreError as exc:
            self.runtime.fail(f"the store cannot be read: {exc}")

    # -- pages ----------------------------------------------------------------------------------------

    def page_request(self, run: SiteRun, url: str, *, fresh: bool = False, due: bool = False,
                     checked: bool = False, entry: DueEntry | object | None = _UNREAD) -> Request:
        """The request of a page of *run*'s set: its own watch (:func:`page_watch`), as the
        watch spider makes any other. *fresh*: added to the set, its first observation is a silent
        baseline, fetched in full; *due*: its lastmod moved, fetched whatever its schedule says;
        *checked*: its lastmod did not move, fetched to check it; *entry*: its key's due state, read
        with the set (the schedule then reads no table for it)."""
        request = self.spider.watch_request(page_watch(run.watch, url))
        if entry is not _UNREAD:
            request.meta[meta._DUE_ENTRY] = entry
        if fresh:
            request.meta[meta.CONDITIONAL] = False
            request.meta[FRESH] = True
        if fresh or due:
            request.meta[meta.SCHEDULE] = False
        if checked:
            request.meta[_CHECKED] = run.key
            request.meta[_SITE_URL] = run.spec.url
        return request

    def set_observation(self, run: SiteRun, delta: PageSetDelta | None, pages: int = 0) -> Observation:
        """The page set as an observation of the site watch's key, judged against its stored rows
        (*delta*, of a set of *pages* pages); an error when *run* has one: its last good set is kept."""
        options = {"site_watch": run.key, "site_pages": True, "confirm": False}
        obs = Observation(key=run.key, url=run.spec.url, options=options, site_watch=run.key)
        # counted here, not where the discovery's requests are made: in a distributed round every
        # process makes them, and only the one that claims the site reads and judges its set
        self.stats.inc("discovered")
        if run.error is not None or delta is None:
            obs.error = run.error or "empty: no page was found"
            self.stats.inc("discovery_failed")
        else:
            obs.page_set = delta
            self.stats.inc("pages", pages)
        return obs

    async def _pages(self, run: SiteRun, read: SetRead | None) -> AsyncIterator[Any]:
        """The set's observation, then a request for each page the lastmod plan fetches."""
        if run.error is not None or read is None:
            yield self.set_observation(run, None)
            async for request in self._stored_requests(run):
                yield request
            self._shared(run)
            return
        yield self.set_observation(run, read.delta(first=run.afresh, spec=self.new_spec(run)), len(read))
        if not run.trusted:  # counted here, where the set is judged: by the process that claimed the site
            self.stats.inc("lastmod_untrusted_runs")
            self.health.full_checks[run.key] = run.spec.url
        pacer, listed = StartPacer(self.crawler), ListedPages(self.runtime)
        for i, url in enumerate(read.urls):
            if not read.selected[i]:
                continue
            entry = read.entry(i)
            plan = page_plan(url, read.lastmod(i), entry.last_seen if entry else None, trusted=run.trusted,
                             turn=run.turn)
            if plan != "unlisted":
                self.stats.inc(f"lastmod_{plan}")
            if plan == "skipped":
                await listed.add(page_watch(run.watch, url).key)
                continue
            await pacer.room()
            yield self.page_request(run, url, fresh=run.has_set and not read.stored[i], due=plan == "moved",
                                    checked=plan == "checked", entry=entry)
        await listed.flush()
        self._shared(run)

    # -- sitemap mode ---------------------------------------------------------------------------------

    async def sitemap_read(self, response: Response) -> AsyncIterator[Any]:
        run: SiteRun = response.meta[RUN]
        listing = Listing(run.watch)
        try:
            await self._tree(run, response, listing)
        except SitemapError as exc:
            run.error = f"{exc} ({response.url})" if response.url not in str(exc) else str(exc)
        read = None
        try:
            read = await self._judged(run, listing) if run.error is None else None
        except StoreError as exc:
            self.runtime.fail(f"the store cannot be read: {exc}")
            return
        async for item in self._pages(run, read):
            yield item

    @reports_refusals
    def sitemap_failed(self, failure: Failure) -> Iterator[Any]:
        request: Request = failure.request  # type: ignore[attr-defined]
        run: SiteRun = request.meta[RUN]
        run.error = f"{self.spider.describe_failure(failure)} (the sitemap {request.url})"
        yield self.set_observation(run, None)
        try:
            for rows in run.stored.batches_now():
                for url, entry in rows:
                    yield self.page_request(run, url, entry=entry)
        except StoreError as exc:
            self.runtime.fail(f"the store cannot be read: {exc}")
        self._shared(run)

    def _shared(self, run: SiteRun) -> None:
        """A distributed round's other processes need not wait for this site's pages any more:
        they are queued (changewatch.distributed.sharing)."""
        shared = round_scheduler(self.crawler)
        if shared is not None:
            shared.shared(run.key)

    async def _tree(self, run: SiteRun, response: Response, listing: Listing) -> None:
        """Every page a sitemap tree lists, into *listing*: the index's children read too, at
        most MAX_CHILD_SITEMAPS of them, none twice (an index listing itself), MAX_INDEX_DEPTH deep."""
        if response.status != 200:
            raise SitemapError(f"http: HTTP {response.status} for the sitemap {response.url}")
        read = read_sitemap(response, listing.add)
        done = {canonical_url(response.url)}
        offsite, level, children = read.offsite, 0, read.children
        while children:
            level += 1
            todo = [url for url in dict.fromkeys(children) if canonical_url(url) not in done]
            if level > MAX_INDEX_DEPTH + 1 or len(done) + len(todo) > MAX_CHILD_SITEMAPS + 1:
                self.stats.inc("sitemaps_bounded")
                logger.warning("changewatch: site %s: its sitemaps go more than %d levels deep or list more than %d "
                               "sitemaps: the first ones are read", run.key, MAX_INDEX_DEPTH, MAX_CHILD_SITEMAPS)
                todo = todo[:max(0, MAX_CHILD_SITEMAPS + 1 - len(done))] if level <= MAX_INDEX_DEPTH + 1 else []
            done.update(canonical_url(url) for url in todo)
            children = []
            for start in range(0, len(todo), _AT_ONCE):
                for child in await asyncio.gather(*(self._child(url, listing) for url in todo[start:start + _AT_ONCE])):
                    children.extend(child.children)
                    offsite += child.offsite
        self.stats.inc("sitemaps_read", len(done))
        if offsite:
            self.stats.inc("offsite", offsite)
            logger.warning("changewatch: site %s: %d URL(s) of its sitemaps are on another host: not watched",
                           run.key, offsite)

    async def _child(self, url: str, listing: Listing) -> Any:
        request = Request(url, dont_filter=True, meta={meta.CONDITIONAL: False, "download_maxsize": MAX_SITEMAP_BYTES})
        response = await self._download(request)
        if isinstance(response, str):
            raise SitemapError(f"{response} (the sitemap {url})")
        if response.status != 200:
            raise SitemapError(f"http: HTTP {response.status} for the sitemap {url}")
        return read_sitemap(response, listing.add)

    async def _download(self, request: Request) -> Response | str:
        """*request* through the downloader middlewares (the guard, robots.txt, retries); a
        failure in words."""
        try:
            return await self.crawler.engine.download_async(request)
        except Exception as exc:
            failure = Failure(exc)  # type: ignore[no-untyped-call]
            failure.request = request  # type: ignore[attr-defined]
            return describe_failure(failure, maxsize=self.crawler.settings.getint("DOWNLOAD_MAXSIZE"))

    async def _judged(self, run: SiteRun, listing: Listing) -> SetRead | None:
        """The listed pages merged with the stored set, the new set chosen (``max_pages``); None,
        with run.error set, when the list cannot be trusted."""
        if not listing.pages:
            run.error = (f"empty: the sitemap lists no page{' the watch allows' if listing.found else ''} "
                         f"({run.spec.url})")
            return None
        read = await merged(*listing.sorted(), run.stored)
        left_out = read.select(run.spec.max_pages)
        if left_out:
            self._capped(run, len(read.urls))
        else:
            self.health.end(run.key, run.spec.url, MAX_PAGES)
        if run.has_set and shrunk(read.stored_count, len(read)):
            await self._confirm_loss(run, read)
        return read

    async def _confirm_loss(self, run: SiteRun, read: SetRead) -> None:
        """A sudden loss believed only when the sitemap lists the same again and most of a sample
        of the missing pages are gone."""
        self.stats.inc("loss_checked")
        response = await self._download(Request(run.spec.url, dont_filter=True, meta={
            meta.CONDITIONAL: False, "download_maxsize": MAX_SITEMAP_BYTES}))
        same = False
        if not isinstance(response, str):
            again = Listing(run.watch)
            try:
                await self._tree(run, response, again)
                same = again.sorted()[0] == read.urls
            except SitemapError:
                same = False
        sample = random.sample(read.gone, min(_LOSS_SAMPLE, len(read.gone)))
        statuses: list[int | None] = []
        for url in sample:
            answer = await self._download(Request(url, dont_filter=True, meta={meta.CONDITIONAL: False,
                                                                               "handle_httpstatus_all": True}))
            statuses.append(None if isinstance(answer, str) else answer.status)
        if loss_confirmed(same, statuses):
            self.stats.inc("loss_confirmed")
            return
        self.stats.inc("loss_unconfirmed")
        run.error = (f"partial: the sitemap lists {len(read)} of the {read.stored_count} pages it listed, and "
                     "the loss is not confirmed (fetched again, and a sample of the missing pages): the last good "
                     f"set is kept ({run.spec.url})")

    def _capped(self, run: SiteRun, found: int) -> None:
        self.stats.inc("capped")
        message = (f"{found} pages found, over its max_pages ({run.spec.max_pages}): the first "
                   f"{run.spec.max_pages} in URL order are watched")
        if self.health.begin(run.key, run.spec.url, MAX_PAGES, message):  # said once, when it begins
            logger.warning("changewatch: site %s: health: %s", run.key, message)

    # -- lastmod's trust ------------------------------------------------------------------------------

    def _trusted(self, run: SiteRun) -> bool:
        """Whether the site's lastmod is trusted: no open ``lastmod`` health condition (a run that
        checked every page and found none wrong ends it)."""
        return self.health.opened(run.key, run.spec.url, LASTMOD) is None

    def _scraped(self, item: Any, response: Response | Failure | None, spider: Any) -> None:
        # an item from an errback comes with the Failure in place of the response
        if not isinstance(response, Response):
            return
        site = response.meta.get(_CHECKED)
        if site is None or not isinstance(item, dict) or item.get("kind") not in ("content", "field", "entities"):
            return
        self.stats.inc("lastmod_wrong")
        logger.warning("changewatch: site %s: %s changed while its sitemap lastmod did not move: the site's lastmod "
                       "is untrusted, every page is checked each run until it proves right", site, response.url)
        self.health.wrong.add(site)
        shared = round_scheduler(self.crawler)
        if shared is not None:  # the process of the round that read the sitemap judges the full check
            shared.note(f"{LASTMOD}:{site}")
        self.health.begin(site, response.meta[_SITE_URL], LASTMOD,
                          f"the sitemap's lastmod is untrusted: {response.url} changed while its lastmod did not move",
                          recheck=shared is not None)
