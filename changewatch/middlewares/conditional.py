"""Conditional requests: a re-visit sends the validators of the last full response the store
kept for its URL, and a 304 becomes an "unchanged" observation instead of a download.

Validators reach the store only with the observation made from their response, in the same
transaction (ChangewatchPipeline): a crash between download and commit leaves the old validators,
so the next run fetches the page in full instead of being told "not modified" about a change it
never saw. See docs/conditional.md for the contract and the interplay with HttpCacheMiddleware.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import AsyncIterator, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from itemadapter import ItemAdapter
from scrapy import Request, signals
from scrapy.crawler import Crawler
from scrapy.exceptions import NotConfigured
from scrapy.http import Response

from .. import meta
from ..core import clock
from ..core.validators import HttpValidators, accept_validators, revalidation
from ..items import Observation
from ..runtime.origins import ResponseOrigins
from ..runtime.services import CrawlServices
from ..runtime.stats import Stats
from .notmodified import KnownState, NotModified, not_modified_callback, site_watch_of

__all__ = ["ConditionalRequestMiddleware", "ConditionalSpiderMiddleware", "NotModified", "ResponseOrigins",
           "answer_not_modified", "response_origin"]

logger = logging.getLogger(__name__)

_VALIDATOR_HEADERS = (b"If-None-Match", b"If-Modified-Since")
_FULL_FETCH_STATS = {"no_validators": "full_fetch_no_validators", "keys_disagree": "full_fetch_keys_disagree",
                     "spec_changed": "full_fetch_spec_changed", "max_runs": "full_fetch_max_runs",
                     "max_age": "full_fetch_max_age"}


@dataclass(frozen=True, slots=True)
class _Sent:
    url: str
    etag: str | None
    last_modified: str | None
    keys: tuple[str, ...]
    size: int
    links: str | None = None


def _strip_validators(request: Request) -> None:
    for name in _VALIDATOR_HEADERS:
        request.headers.pop(name, None)


def _asked_for_304(request: Request, crawler: Crawler) -> bool:
    """Whether the request's callback asked to see a 304, by HttpErrorMiddleware's own precedence
    (meta, then the spider, then HTTPERROR_ALLOWED_CODES), so that what it lets through and what
    we hand to the callback agree. HTTPERROR_ALLOW_ALL does not count: a project that lets every
    status through did not ask for changewatch's 304s."""
    request_meta = request.meta
    if request_meta.get("handle_httpstatus_all"):
        return True
    if "handle_httpstatus_list" in request_meta:
        return 304 in request_meta["handle_httpstatus_list"]
    allowed = getattr(crawler.spider, "handle_httpstatus_list", None)
    if allowed is None:
        allowed = crawler.settings.getlist("HTTPERROR_ALLOWED_CODES")
    return 304 in [int(code) for code in allowed]


async def answer_not_modified(crawler: Crawler, runtime: CrawlServices, request: Request, response: Response,
                              notice: NotModified) -> Response:
    """*response* (a 304) as the unchanged observations of *notice*'s keys: handed to the
    spider's callback when it asked to see 304s (with the keys' stored states), else to
    :func:`not_modified_callback`. Also what a skipped render answers (RenderMiddleware)."""
    request.meta["dont_cache"] = True  # a 304 is no page for HttpCacheMiddleware to keep
    request.meta[meta.NOT_MODIFIED] = notice
    if _asked_for_304(request, crawler):
        for key in notice.keys:
            state = await runtime.runner.call(runtime.runner.store.read, runtime.spider, key)
            if state is not None:
                notice.states[key] = KnownState.of(state, runtime.comparisons)
        return response
    quiet = request.replace(callback=not_modified_callback, errback=None, dont_filter=True, cb_kwargs={})
    quiet.meta["handle_httpstatus_list"] = [304]
    quiet.meta[meta._ANSWERED] = request  # the spider's own request: what -a calibrate=N repeats
    return response.replace(request=quiet)


class ConditionalRequestMiddleware:
    """Downloader middleware (priority 950, between HttpCacheMiddleware and the download):
    adds If-None-Match / If-Modified-Since from the store; turns a 304 into unchanged
    observations; retries a 412 in full. ``changewatch_conditional: False`` in meta opts out."""

    def __init__(self, crawler: Crawler, runtime: CrawlServices):
        self.crawler = crawler
        self.runtime = runtime
        self.runner = runtime.runner
        self.stats = Stats(crawler, "conditional")
        self.max_runs = runtime.config.conditional_full_fetch_runs
        self.max_age = timedelta(days=runtime.config.conditional_full_fetch_days)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ConditionalRequestMiddleware:
        runtime = CrawlServices.of(crawler)
        if not runtime.config.conditional_enabled:
            raise NotConfigured("CHANGEWATCH_CONDITIONAL_ENABLED is off: every request is a full fetch")
        settings = crawler.settings
        if settings.getbool("HTTPCACHE_ENABLED") and str(settings.get("HTTPCACHE_POLICY", "")).endswith("DummyPolicy"):
            logger.warning("HTTPCACHE_ENABLED with DummyPolicy answers every re-visit from the cache: changewatch "
                           "will see no change. Use scrapy.extensions.httpcache.RFC2616Policy (docs/conditional.md)")
        return cls(crawler, runtime)

    def _eligible(self, request: Request) -> bool:
        if request.meta.get(meta._SUBREQUEST):
            return False  # a render's own request: the render decides what it sends
        if request.method not in ("GET", "HEAD"):
            return False
        if request.meta.get(meta.CONFIRMATION):
            self.stats.inc("confirmation")  # the load that confirms a change trusts no 304
            return False
        if request.meta.get(meta.CONDITIONAL, True) is False:
            self.stats.inc("opt_out")
            return False
        if request.meta.get("playwright"):
            # A browser navigation answered 304 stalls scrapy-playwright (docs/conditional.md).
            self.stats.inc("skipped_rendered")
            return False
        if any(request.headers.get(name) for name in _VALIDATOR_HEADERS):
            # Someone else validates this request (HttpCacheMiddleware, the spider): never both.
            self.stats.inc("foreign_validators")
            return False
        return True

    async def process_request(self, request: Request) -> None:
        sent: _Sent | None = request.meta.pop(meta._SENT, None)
        if sent is not None:  # a redirect or retry copied our headers: they belonged to sent.url
            for name, value in zip(_VALIDATOR_HEADERS, (sent.etag, sent.last_modified), strict=True):
                if value is not None and request.headers.get(name) == value.encode("latin-1"):
                    request.headers.pop(name, None)
        if not self._eligible(request) or not self.runtime.is_open:
            return
        rows = await self.runner.call(self.runner.store.validators, self.runtime.spider, request.url)
        key = request.meta.get(meta.KEY)
        if key is not None:  # two watches of one URL (other regions, other fields) validate apart
            rows = [r for r in rows if r.key == key]
        if not rows:
            return
        if request.meta.get(meta._LINKS) is True and any(r.links is None for r in rows):
            # a link-mode site page whose links were not kept: a 304 would hide where it leads
            self.stats.inc("full_fetch_no_links")
            return
        # the crawl's clock: a full fetch's age is measured on the clock its fetch time was taken with
        plan = revalidation(rows, now=clock.now(), spec=request.meta.get(meta.SPEC),
                            max_runs=self.max_runs, max_age=self.max_age)
        if plan.full_fetch is not None:
            self.stats.inc(_FULL_FETCH_STATS[plan.full_fetch])
            return
        if plan.etag is not None:
            request.headers[b"If-None-Match"] = plan.etag.encode("latin-1")
        if plan.last_modified is not None:
            request.headers[b"If-Modified-Since"] = plan.last_modified.encode("latin-1")
        request.meta[meta._SENT] = _Sent(request.url, plan.etag, plan.last_modified, plan.keys, plan.size,
                                         rows[0].links)
        self.stats.inc("sent")

    async def process_response(self, request: Request, response: Response) -> Request | Response:
        if "cached" in response.flags or request.meta.get(meta._SUBREQUEST) or meta.NOT_MODIFIED in request.meta:
            return response
        sent: _Sent | None = request.meta.get(meta._SENT)
        if 200 <= response.status < 300:
            request.meta[meta._WIRE_SIZE] = len(response.body)  # before HttpCompressionMiddleware
            if sent is not None:
                self._count_ignored(sent, response)
            return response
        if sent is None:
            if response.status == 304 and not any(request.headers.get(n) for n in _VALIDATOR_HEADERS):
                # Not an answer to anything we asked: HttpErrorMiddleware makes it an error record.
                self.stats.inc("unexpected_not_modified")
            return response
        if response.status == 412:
            # We never send If-Match: a 412 is a server confused by our validators. Ask again plainly.
            self.stats.inc("precondition_failed")
            retry = request.replace(dont_filter=True)
            _strip_validators(retry)
            retry.meta.pop(meta._SENT, None)
            retry.meta[meta.CONDITIONAL] = False
            return retry
        if response.status != 304:
            return response
        return await self._not_modified(request, response, sent)

    def _count_ignored(self, sent: _Sent, response: Response) -> None:
        etag = response.headers.get(b"ETag")
        lm = response.headers.get(b"Last-Modified")
        if (sent.etag is not None and etag is not None and etag.decode("latin-1").strip() == sent.etag) or (
                sent.etag is None and lm is not None and lm.decode("latin-1").strip() == sent.last_modified):
            self.stats.inc("ignored_by_server")  # same validators, full body: the server does not validate

    async def _not_modified(self, request: Request, response: Response, sent: _Sent) -> Response:
        self.stats.inc("not_modified")
        self.stats.inc("bytes_saved", sent.size)
        return await answer_not_modified(self.crawler, self.runtime, request, response,
                                         NotModified(url=sent.url, keys=sent.keys, links=sent.links))


def response_origin(response: Response, stats: Stats) -> HttpValidators | None:
    """The validators of a full response (None: not a 2xx), to keep with its observation."""
    if not 200 <= response.status < 300:
        return None
    headers = response.headers
    etag, last_modified, refused = accept_validators(headers.get(b"ETag"), headers.get(b"Last-Modified"),
                                                     headers.get(b"Date"), datetime.now(UTC))
    if refused:
        stats.inc("validator_refused", len(refused))
        logger.debug("changewatch: validators of %s not kept: %s", response.url, ", ".join(refused))
    links = response.meta.get(meta._LINKS)  # a link-mode site page's, once its callback found them
    return HttpValidators(url=response.url, key="", etag=etag, last_modified=last_modified,
                          size=int(response.meta.get(meta._WIRE_SIZE, len(response.body))),
                          spec=response.meta.get(meta.SPEC), render=response.meta.get(meta._RENDER_DEPS),
                          links=links if isinstance(links, str) else None)


class ConditionalSpiderMiddleware:
    """Spider middleware: remembers which full response each item came from (its validators
    go to the store with the observation), drops the validators of keys a page no longer
    yields, and adds the unchanged observations after a callback that asked to see a 304."""

    def __init__(self, crawler: Crawler, runtime: CrawlServices):
        self.crawler = crawler
        self.runtime = runtime
        self.origins: ResponseOrigins = runtime.origins
        self.runner = runtime.runner
        self.stats = Stats(crawler, "conditional")
        self._pending: set[asyncio.Task[bool]] = set()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ConditionalSpiderMiddleware:
        mw = cls(crawler, CrawlServices.of(crawler))
        crawler.signals.connect(mw.origins.forget, signal=signals.item_dropped)
        crawler.signals.connect(mw.origins.forget, signal=signals.item_error)
        crawler.signals.connect(mw._closed, signal=signals.spider_closed)
        return mw

    async def _closed(self) -> None:
        if self._pending:
            await asyncio.gather(*self._pending, return_exceptions=True)
        self.origins.clear()

    def _origin(self, response: Response) -> HttpValidators | None:
        return response_origin(response, self.stats)

    def _unchanged(self, response: Response) -> Iterator[Observation]:
        notice: NotModified | None = response.meta.get(meta.NOT_MODIFIED)
        if notice is None or response.status != 304 or response.request is None:
            return
        if response.request.callback is not_modified_callback:
            return  # that callback yields them itself
        for key in notice.keys:
            yield Observation(key=key, url=notice.url, not_modified=True, site_watch=site_watch_of(response))

    def _seen(self, origin: HttpValidators | None, item: Any, keys: set[str], response: Response) -> None:
        if origin is None or isinstance(item, Request):
            return
        links = response.meta.get(meta._LINKS)
        if isinstance(links, str):  # a link-mode site page's links, found by its callback
            origin = dataclasses.replace(origin, links=links)
        # the response too when its body may be kept as evidence (the pipeline decides)
        self.origins.register(item, origin, response if self.runtime.config.evidence_enabled else None)
        if isinstance(item, dict):  # the watch spider's observations: no adapter needed
            key = item.get("key")
        else:
            key = ItemAdapter(item).get("key") if ItemAdapter.is_item(item) else None
        if key is not None:
            keys.add(str(key))

    def _forget_others(self, response: Response, origin: HttpValidators | None, keys: set[str]) -> None:
        """A full response's keys are all known once its callback is done: validators of keys
        it no longer yields would disagree with the others for ever (a full fetch every run).
        Not for a request that names its one key: other requests of the URL observe other keys."""
        if origin is None or not keys or response.meta.get(meta.KEY) is not None:
            return
        forget = self.runtime.write(self.runner.store.forget_validators, self.runtime.spider, origin.url, sorted(keys))
        task = asyncio.get_running_loop().create_task(forget)
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    def process_spider_output(self, response: Response, result: Iterable[Any]) -> Iterator[Any]:
        origin, keys = self._origin(response), set[str]()
        for item in result:
            self._seen(origin, item, keys, response)
            yield item
        self._forget_others(response, origin, keys)
        yield from self._unchanged(response)

    async def process_spider_output_async(self, response: Response, result: AsyncIterator[Any]) -> AsyncIterator[Any]:
        origin, keys = self._origin(response), set[str]()
        async for item in result:
            self._seen(origin, item, keys, response)
            yield item
        self._forget_others(response, origin, keys)
        for obs in self._unchanged(response):
            yield obs
