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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scrapy import Request, signals
from scrapy.http import Response
from scrapy.spidermiddlewares.httperror import HttpError
from twisted.python.failure import Failure

from .. import meta
from ..core import clock
from ..core.comparisons import spec_digest
from ..core.schedule import DueEntry
from ..core.sitemaps import MAX_CHILD_SITEMAPS, MAX_INDEX_DEPTH, MAX_SITEMAP_BYTES, SitemapError
from ..core.siteset import REBASELINE, PageSetDelta, bounded, kept_pages, loss_confirmed, page_plan, shrunk
from ..core.urls import canonical_url
from ..distributed import round_scheduler
from ..extract.observe import describe_failure
from ..extract.sitemaps import page_links, read_sitemap
from ..guard import reports_refusals
from ..items import Observation
from ..runtime.services import CrawlServices
from ..runtime.stats import Stats
from ..store import StoreError
from ..store.semantics import parse_time
from ..watchlist.site import SiteSpec, allowed, followed, page_watch
from .pacing import StartPacer
from .site_health import LASTMOD, MAX_PAGES, SiteHealth
from .site_set import ListedPages, Listing, SetRead, StoredPages, merged

if TYPE_CHECKING:
    from ..watchlist import Watch
    from .watch import WatchSpider

__all__ = ["FRESH", "SiteCrawler", "SiteRun"]

logger = logging.getLogger(__name__)

#: meta: the SiteRun a discovery request belongs to (private)
_RUN = "_changewatch_site_run"
#: meta: the link hops from a start URL (private)
_HOPS = "_changewatch_site_hops"
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


@dataclass(slots=True)
class SiteRun:
    """One site watch's discovery in this crawl."""

    watch: Watch
    spec: SiteSpec
    #: the last good page set, in the store
    stored: StoredPages
    #: a last good page set is stored (False: the first run)
    has_set: bool
    #: the stored set was chosen as this run chooses it (the same ``max_pages``): else this run's
    #: set is a fresh, silent baseline
    same_spec: bool = True
    #: link mode: the last good page set (canonical URLs; None: no set yet, the first run)
    previous: set[str] | None = None
    #: the site's lastmod is trusted, and the run's turn of the lastmod sample
    trusted: bool = True
    turn: int = 0
    error: str | None = None
    #: link mode
    seen: set[str] = field(default_factory=set)
    watched: set[str] = field(default_factory=set)
    pending: int = 0
    some_failed: bool = False
    unfinished: bool = False
    start_ok: bool = False
    wrong_said: bool = False

    @property
    def key(self) -> str:
        return self.watch.key

    @property
    def afresh(self) -> bool:
        """This run's set is a fresh, silent baseline: none is stored, or it was chosen otherwise."""
        return not (self.has_set and self.same_spec)


class SiteCrawler:
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
            self.stats.inc("discovery_not_due")
            async for request in self._stored_requests(run):
                yield request
            return
        self.stats.inc("discovered")
        # a distributed round's process that claims the site reads its sitemap or follows its links
        # whole: its callbacks and this run's state are this process's (changewatch.distributed)
        common = {_RUN: run, meta.CONDITIONAL: False, meta.SCHEDULE: False, meta._ROUND_UNIT: watch.key}
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
        if not run.trusted:
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
        run: SiteRun = response.meta[_RUN]
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
        run: SiteRun = request.meta[_RUN]
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

    # -- link mode ------------------------------------------------------------------------------------

    async def link_read(self, response: Response) -> AsyncIterator[Any]:
        if _RUN not in response.meta:  # a page's confirmation (pipelines/confirm.py): its observation only
            if response.meta.get(meta.WATCH) is not None:
                # its validators replace the first load's: its links go with them (deny is applied
                # when they are followed)
                response.meta[meta._LINKS] = "\n".join(page_links(response, ()))
                for obs in self.spider.parse_watch(response):
                    yield obs
            return
        if response.status == 304 and meta.NOT_MODIFIED not in response.meta:
            # a 304 to a request that carried no validators (link mode lets 304s through): an
            # error, as HttpErrorMiddleware would have made it
            failure = Failure(HttpError(response, "Ignoring non-200 response"))  # type: ignore[no-untyped-call]
            failure.request = response.request  # type: ignore[attr-defined]
            for item in self.link_failed(failure):
                yield item
            return
        run: SiteRun = response.meta[_RUN]
        run.pending -= 1
        hops = int(response.meta.get(_HOPS, 0))
        watch: Watch | None = response.meta.get(meta.WATCH)
        found = self._links_of(run, response, watch is not None)
        if watch is not None:
            canonical = canonical_url(response.url, keep=run.watch.keep_params, drop=run.watch.drop_params)
            run.watched.add(canonical)
            # a 304's unchanged observation is added by the ConditionalSpiderMiddleware
            for obs in [] if meta.NOT_MODIFIED in response.meta else self.spider.parse_watch(response):
                if run.previous is not None and canonical not in run.previous:
                    obs.options[REBASELINE] = True  # added to the set: a fresh, silent baseline
                yield obs
        links = (found or []) if hops < run.spec.depth else []
        if hops == 0:
            run.start_ok = run.start_ok or bool(links) or run.spec.depth == 0
        for url in links:
            for request in self._follow(run, url, hops + 1):
                yield request
        if run.pending == 0:
            for last in self._link_set(run):
                yield last

    def _links_of(self, run: SiteRun, response: Response, watched: bool) -> list[str] | None:
        """The links of a page: found in it, or, for a 304 (or a render not needed), those kept
        with its validators (None: not kept; what it leads to is unknown this run, and no page of
        the last good set is removed). A watched page's links are kept with its validators."""
        notice = response.meta.get(meta.NOT_MODIFIED)
        if notice is not None:
            self.stats.inc("links_not_modified")
            if notice.links is None:
                run.some_failed = True
                return None
            return notice.links.split("\n") if notice.links else []
        links = page_links(response, run.spec.deny)
        if watched:  # kept: the links the crawl follows, canonical (its SPEC names the patterns)
            keep, drop = run.watch.keep_params, run.watch.drop_params
            kept = (canonical_url(link, keep=keep, drop=drop) for link in links)
            response.meta[meta._LINKS] = "\n".join(dict.fromkeys(u for u in kept if followed(run.spec, u)))
        return links

    def _follow(self, run: SiteRun, found: str, hops: int) -> Iterator[Request]:
        # patterns are matched against the canonical URL (tracking parameters and fragment gone)
        url = canonical = canonical_url(found, keep=run.watch.keep_params, drop=run.watch.drop_params)
        if canonical in run.seen or not followed(run.spec, url):
            return
        watched = allowed(run.spec, url)
        if len(run.seen) >= 2 * run.spec.max_pages or (watched and len(run.watched) + run.pending
                                                           >= run.spec.max_pages):
            if not run.unfinished:
                self._capped(run, len(run.seen) + 1)
            run.unfinished = True
            return
        run.seen.add(canonical)
        run.pending += 1
        yield self._link_request(run, url, hops)

    def _link_request(self, run: SiteRun, url: str, hops: int) -> Request:
        """Link mode: the request of *url*, *hops* links from a start URL. A page of the set is
        its own watch's request (its options, vantage point, rendering; a failure is its error),
        fetched whatever its schedule says; one of the last good set is conditional, a 304 leading
        to the links kept with its validators (none kept: a full fetch). A page that only leads
        to others is fetched in full."""
        canonical = canonical_url(url, keep=run.watch.keep_params, drop=run.watch.drop_params)
        site_meta = {_RUN: run, _HOPS: hops, meta.SCHEDULE: False, meta._ROUND_UNIT: run.key}
        if not allowed(run.spec, canonical):
            return Request(url, callback=self.link_read, errback=self.link_failed, dont_filter=True,
                           meta={**site_meta, meta.CONDITIONAL: False, meta.WATCH: None})
        request = self.spider.watch_request(page_watch(run.watch, url)).replace(
            callback=self.link_read, errback=self.link_failed)
        request.meta.update(site_meta)
        # the links kept are those these patterns follow: other patterns, a full fetch (a new spec)
        spec = run.spec
        request.meta[meta.SPEC] = f"{request.meta.get(meta.SPEC)}|links:" + spec_digest(
            [spec.allow, spec.follow, spec.deny, run.watch.keep_params, run.watch.drop_params])
        if run.previous is not None and canonical in run.previous:
            request.meta[meta._LINKS] = True
            request.meta["handle_httpstatus_list"] = [304]
        else:  # new to the set: a fresh, silent baseline, never a 304
            request.meta[meta.CONDITIONAL] = False
        return request

    @reports_refusals
    def link_failed(self, failure: Failure) -> Iterator[Any]:
        request: Request = failure.request  # type: ignore[attr-defined]
        run: SiteRun = request.meta[_RUN]
        run.pending -= 1
        status = getattr(getattr(failure.value, "response", None), "status", None)
        # A page that is gone links to nothing any more; any other failure hides what it links to,
        # and no page of the last good set is removed this run.
        run.some_failed = run.some_failed or status not in (404, 410)
        watch: Watch | None = request.meta.get(meta.WATCH)
        canonical = canonical_url(request.url, keep=run.watch.keep_params, drop=run.watch.drop_params)
        if watch is not None and run.previous is not None and canonical in run.previous:
            yield from self.spider.observation_failed(failure)  # a watched page fails: its error (then gone:)
        elif watch is not None:
            self.stats.inc("broken_links")  # a link to a page that never answered: not watched
        if request.meta.get(_HOPS) == 0 and run.error is None:
            run.error = f"{self.spider.describe_failure(failure)} (the start page {request.url})"
        if run.pending == 0:
            yield from self._link_set(run)

    def _link_set(self, run: SiteRun) -> Iterator[Any]:
        if run.error is None and not run.start_ok:
            run.error = (f"blocked: the start page links to no page of the site (a block page?): the last good "
                         f"set is kept ({run.spec.url})")
        if run.error is not None:
            yield self.set_observation(run, None)
            return
        if not run.unfinished:
            self.health.end(run.key, run.spec.url, MAX_PAGES)
        previous = run.previous or set()
        found = kept_pages(previous, run.watched, some_failed=run.some_failed, unfinished=run.unfinished)
        pages = bounded(found, run.spec.max_pages, previous)[0]
        chosen = set(pages)
        delta = PageSetDelta(added=[url for url in pages if url not in previous],
                             removed=sorted(previous.difference(found)),
                             dropped=sorted(url for url in previous.intersection(found) if url not in chosen),
                             first=run.afresh, spec=self.new_spec(run))
        yield self.set_observation(run, delta, len(pages))

    # -- lastmod's trust ------------------------------------------------------------------------------

    def _trusted(self, run: SiteRun) -> bool:
        """Whether the site's lastmod is trusted: no open ``lastmod`` health condition (a run that
        checked every page and found none wrong ends it)."""
        if self.health.opened(run.key, run.spec.url, LASTMOD) is None:
            return True
        self.stats.inc("lastmod_untrusted_runs")
        return False

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
