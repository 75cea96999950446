"""A site watch in link mode: its pages found by following links from its start URLs, each page of
the last good set requested conditionally (a 304 leads to the links kept with its validators),
and the set judged once every page requested has answered (docs/sites.md)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from scrapy import Request
from scrapy.http import Response
from scrapy.spidermiddlewares.httperror import HttpError
from twisted.python.failure import Failure

from .. import meta
from ..core.comparisons import spec_digest
from ..core.siteset import REBASELINE, PageSetDelta, bounded, kept_pages
from ..core.urls import canonical_url
from ..extract.sitemaps import page_links
from ..guard import reports_refusals
from ..watchlist.site import allowed, followed, page_watch
from .site_health import MAX_PAGES
from .site_run import HOPS, RUN, SiteRun

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from ..items import Observation
    from ..runtime.stats import Stats
    from ..watchlist import Watch
    from .site_health import SiteHealth
    from .watch import WatchSpider

__all__ = ["LinkMode"]


class LinkMode:
    """The link-mode half of :class:`~changewatch.spiders.site.SiteCrawler`."""

    spider: WatchSpider
    stats: Stats
    health: SiteHealth

    def set_observation(self, run: SiteRun, delta: PageSetDelta | None, pages: int = 0) -> Observation:
        raise NotImplementedError

    def new_spec(self, run: SiteRun) -> str | None:
        raise NotImplementedError

    def _capped(self, run: SiteRun, found: int) -> None:
        raise NotImplementedError

    async def link_read(self, response: Response) -> AsyncIterator[Any]:
        if RUN not in response.meta:  # a page's confirmation (pipelines/confirm.py): its observation only
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
        run: SiteRun = response.meta[RUN]
        run.pending -= 1
        hops = int(response.meta.get(HOPS, 0))
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
        site_meta = {RUN: run, HOPS: hops, meta.SCHEDULE: False, meta._ROUND_UNIT: run.key}
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
        run: SiteRun = request.meta[RUN]
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
        if request.meta.get(HOPS) == 0 and run.error is None:
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
