"""The generic ``watch`` spider: a watchlist file in, change records out. No code to write."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Iterator
from typing import Any

import scrapy
from scrapy.crawler import Crawler
from scrapy.http import Response, TextResponse
from scrapy.utils.misc import load_object
from twisted.python.failure import Failure

from .. import meta
from ..config import ChangewatchConfig
from ..core.documents import json_too_large
from ..extract.content_types import BINARY, detect_type, media_type
from ..extract.feeds import FEED_KINDS, FeedError, is_feed, parse_feed
from ..extract.observe import describe_failure, failed_url, moved_from
from ..extract.page import Page, count_undecodable_page, given_encoding
from ..extract.selectors import binary_body
from ..extract.specs import Entities, FieldSpec
from ..guard import reports_refusals
from ..items import Observation
from ..render.browser import find_browser, how_to_install
from ..runtime.stats import Stats
from .pacing import StartPacer
from .sources import WatchlistSource, is_fetched, open_watchlist
from .watchlist import Watch, WatchlistError
from .watchlist_spool import Watchlist

__all__ = ["WatchSpider", "observe_feed", "observe_page", "observe_watch", "watch_specs"]

logger = logging.getLogger(__name__)

#: the event loop gets a turn after this many start requests
START_YIELD_EVERY = 32


def watch_specs(watch: Watch) -> tuple[dict[str, FieldSpec], Entities | None]:
    """The field and entity specs of a watch: JSON-LD (then microdata) paths and selectors."""
    kinds = watch.kinds
    fields: dict[str, FieldSpec] = {}
    entities: Entities | None = None
    spec = watch.jsonld
    if spec is not None and spec.key is not None:
        # Several products on one page (a category grid, per-size offers): one entity per node.
        entities = Entities.structured(spec.types, key=spec.key, fields={
            path: FieldSpec.path(path, kind=kinds.get(path)) for path in spec.fields})
    elif spec is not None:
        fields.update({path: FieldSpec.schema(spec.types, path, kind=kinds.get(path)) for path in spec.fields})
    fields.update({name: FieldSpec.select(query, kind=kinds.get(name, "auto")) for name, query in watch.fields.items()})
    if watch.entities is not None:
        e = watch.entities
        entities = Entities.select(e.selector, key=e.key, fields={
            name: FieldSpec.select(query, kind=kinds.get(name, "auto")) for name, query in e.fields.items()})
    return fields, entities


def _content_type(response: Response) -> str | None:
    value = response.headers.get(b"Content-Type")
    return value.decode("latin-1") if value else None


def observe_feed(watch: Watch, response: Response) -> Observation:
    """*watch* observed in a feed *response*: its entries as an entity set, with no options needed.
    A body that is not a feed after all (HTML served as RSS, broken XML) is an ``error``."""
    options = {**watch.options(), "kinds": {**FEED_KINDS, **watch.kinds},
               # how the entities were read: another reading (a selector, a JSON path) starts afresh
               "entities_spec": "feed"}
    obs = Observation(key=watch.key, url=response.url, options=options)
    try:
        obs.entities = parse_feed(response.body, url=response.url, content_type=_content_type(response))
    except FeedError as exc:
        obs.error = str(exc)
    return obs


def observe_watch(watch: Watch, response: Response) -> tuple[Observation, int]:
    """The observation of *watch* in *response*, and the number of invalid JSON-LD blocks."""
    obs, page = observe_page(watch, response)
    return obs, page.invalid_jsonld_blocks if page is not None else 0


def observe_page(watch: Watch, response: Response) -> tuple[Observation, Page | None]:
    """The observation of *watch* in *response*, and the page it was read from (its invalid
    JSON-LD blocks and undecodable bytes, for stats; None for a document read in the worker
    or a feed). The response is read as its content type says (the watch's ``type``; else a
    feed when is_feed says so, else detect_type): an HTML page or a feed here, any other
    document in the worker (observe_document)."""
    declared = watch.type or ("json" if watch.json is not None else None)
    content_type = _content_type(response)
    if declared == "feed" or (declared is None and watch.compares_text and is_feed(content_type, response.body)):
        return observe_feed(watch, response), None
    if watch.reads_html:
        return _observe_page(watch, response)
    kind = declared or detect_type(content_type, response.body, response.url)
    if kind == "html":
        return _observe_page(watch, response)
    return observe_document(watch, response, kind, media_type(content_type)), None


def _observe_page(watch: Watch, response: Response) -> tuple[Observation, Page]:
    page = Page(response)
    if watch.compares_text:
        obs = page.observe(watch.key, text=True, region=watch.region, options=watch.options())
        return obs, page
    fields, entities = watch_specs(watch)
    obs = page.observe(watch.key, fields or None, entities=entities, region=watch.region,
                       options=watch.options())
    # Watches compared by fields do not compare their text: only the region's presence matters.
    obs.html = None
    return obs, page


def observe_document(watch: Watch, response: Response, kind: str, media: str) -> Observation:
    """An observation carrying the response's bytes, to be read in the worker as *kind* says
    (core/documents.py; "bytes": hashed whole, core/comparisons/bytes.py). Only what the first
    bytes and the size tell is decided here, on the crawl's thread."""
    options = {**watch.options(), "content_type": kind}
    obs = Observation(key=watch.key, url=response.url, options=options)
    body = response.body
    if kind == BINARY:
        what = binary_body(body) or "binary data"
        obs.error = (f"unsupported: {media or 'no Content-Type'} ({what}); `type: bytes` watches its hash and size")
    elif kind != "bytes" and (not body or body.isspace()):
        obs.error = "empty: the response body is empty"
    elif kind in ("json", "text") and (binary := binary_body(body)):
        obs.error = f"unsupported: {binary}, not {kind} (Content-Type: {media or 'none'})"
    elif kind == "json":
        obs.error = json_too_large(len(body))  # not even shipped to a worker
    if obs.error:
        return obs
    obs.body = body
    obs.encoding = given_encoding(response) if isinstance(response, TextResponse) else None
    if kind == "json" and watch.json is not None:
        spec = watch.json
        obs.options["json"] = spec.options()
        obs.options["kinds"] = dict(watch.kinds)
        if spec.fields:  # how each field is read: an edited path starts afresh (issue 11, item 6)
            obs.options["field_specs"] = {path: f"json:{path}" for path in spec.fields}
        if spec.entities is not None:
            obs.options["entities_spec"] = f"json:{spec.entities.path or ''}|{spec.entities.key}"
    return obs


def _runtime_expected(crawler: Crawler) -> bool:
    """Whether the crawl will have the CrawlServices extension, which stops it with exit
    status 1 when the spider cannot start. Asked while the spider is built, before add-ons have
    updated the settings: so by the add-on (or the extension) being named in them."""
    from ..addon import Addon
    from ..runtime.services import CrawlServices

    for setting, wanted in (("ADDONS", Addon), ("EXTENSIONS", CrawlServices)):
        for component, priority in crawler.settings.getwithbase(setting).items():
            if priority is None:
                continue
            try:
                cls = load_object(component) if isinstance(component, str) else component
            except (ImportError, AttributeError, ValueError, NameError):
                continue
            if isinstance(cls, type) and issubclass(cls, wanted):
                return True
    return False


class WatchSpider(scrapy.Spider):
    """``scrapy crawl watch -a watchlist=watchlist.yaml -O changes.jsonl``; the watchlist may also
    be an http(s) URL or inline JSON (:mod:`changewatch.spiders.sources`)."""

    name = "watch"
    cw_stats: Stats
    #: the watchlist's watches, read again from their spool on each iteration (a list in tests)
    watches: Watchlist | list[Watch]
    #: why the crawl must stop before it fetches or stores anything (CrawlServices.open)
    changewatch_cannot_start: str | None = None
    #: some watch is rendered in a browser (RenderMiddleware)
    changewatch_renders: bool = False
    #: the watchlist came from an http(s) URL: its notify destinations go through the SSRF guard
    watchlist_fetched: bool = False

    def __init__(self, watchlist: str | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.watchlist = watchlist or ""  # none: from_crawler says so and the crawl stops

    @property
    def changewatch_listed(self) -> int:
        """How many watches the watchlist has (the progress line's total)."""
        return len(getattr(self, "watches", ()))

    @classmethod
    def from_crawler(cls, crawler: Crawler, *args: Any, **kwargs: Any) -> WatchSpider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider.cw_stats = Stats(crawler, "watch")
        # Read and validated here, before the engine starts: a bad or unreachable watchlist stops
        # the crawl (exit status 1) before anything is fetched or stored.
        config = ChangewatchConfig.from_settings(crawler.settings)
        source = WatchlistSource(config.guard.policy, config.watchlist_dir, config.watchlist_timeout,
                                 config.watchlist_maxsize, crawler.settings.get("USER_AGENT") or "changewatch")
        try:
            if not spider.watchlist:
                raise WatchlistError("the watch spider needs a watchlist: scrapy crawl watch -a watchlist=FILE "
                                     "(a path, an http(s) URL or inline JSON)")
            # read watch by watch and kept on disk: the crawl's memory does not grow with the watchlist
            watches = open_watchlist(spider.watchlist, source)
            spider.watches = watches
            spider.changewatch_renders = watches.renders
            if spider.changewatch_renders and find_browser(config.render_browser) is None:
                raise WatchlistError(f"watches with render need a browser and there is none: {how_to_install()}")
            spider.watchlist_fetched = is_fetched(spider.watchlist)
        except WatchlistError as exc:
            # Said once, here, and nothing else: raised from from_crawler, it also came out as a
            # 25-line asyncio "Task exception was never retrieved" traceback. The runtime reads
            # changewatch_cannot_start and stops the crawl as the spider opens (exit status 1).
            logger.error("The watch spider cannot start: %s", exc)
            if not _runtime_expected(crawler):
                raise  # nothing would stop the crawl: fail loudly rather than fetch nothing and exit 0
            spider.watches = []
            spider.changewatch_cannot_start = f"the watchlist cannot be used: {exc}"
        return spider

    def changewatch_canaries(self) -> dict[str, tuple[str, dict[str, Any]]]:
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
            request_meta: dict[str, Any] = {meta.WATCH: watch, meta.KEY: watch.key,
                                            meta.CONDITIONAL: watch.conditional, meta.SPEC: watch.spec()}
            if watch.every is not None:  # the ScheduleMiddleware drops it until it is due
                request_meta[meta.EVERY] = watch.every
            if watch.vantage:  # the VantageMiddleware pins proxy, language, cookies and headers
                request_meta[meta.VANTAGE] = watch.vantage
            if watch.render is not None:  # the RenderMiddleware renders it, or re-checks it first
                request_meta[meta.RENDER] = watch.render
            yield scrapy.Request(watch.url, callback=self.parse_watch, errback=self.failed,
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
        if page is not None:
            self.cw_stats.inc("jsonld_invalid_blocks", page.invalid_jsonld_blocks)
            count_undecodable_page(self.crawler, page)
        self.cw_stats.inc("error" if obs.error else "observed")
        return [obs]

    @reports_refusals  # as a `refused:` error record
    def failed(self, failure: Failure) -> Iterator[Observation]:
        request = failure.request  # type: ignore[attr-defined]
        watch: Watch = request.meta[meta.WATCH]
        self.cw_stats.inc("failed")
        url = failed_url(request.url)
        yield Observation(key=watch.key, url=url, options=watch.options(), error=describe_failure(failure))
