"""``RenderMiddleware``: which requests are rendered in a browser, and which need not be.

A request whose meta says ``changewatch_render`` (a watch's ``render``, ``ChangewatchSpider.watch(...,
render=True)``) is rendered by :class:`changewatch.render.RenderDownloadHandler`, unless the
dependency set of its last render (the document, its scripts, its data: kept with the
observation) is unchanged: then each dependency is re-checked with a plain conditional request
and, when every one is unchanged, the request is answered as a 304 is (unchanged observations
of its keys) without starting the browser. Every other request passes untouched.
docs/rendering.md says what is re-checked and why that is sound.
"""

from __future__ import annotations

import logging
from typing import Any

from scrapy import Request, signals
from scrapy.crawler import Crawler
from scrapy.http import Response
from scrapy.utils.misc import load_object

from .. import meta
from ..addon import RENDER_HANDLER
from ..core.render_options import RenderOptions, parse_render
from ..render.browser import find_browser, how_to_install
from ..render.errors import BrowserMissing, RenderError
from ..render.fetch import fetch
from ..render.preflight import plan, recheck
from ..runtime.services import CrawlServices
from ..runtime.spider import spider_options
from ..runtime.stats import Stats
from .conditional import answer_not_modified
from .notmodified import NotModified

__all__ = ["RenderMiddleware"]

logger = logging.getLogger(__name__)

_WHY_STATS = {"unknown": "why_unknown", "opt_out": "why_opt_out", "keys_disagree": "why_keys_disagree",
              "confirmation": "why_confirmation",
              "spec_changed": "why_spec_changed", "options_changed": "why_options_changed",
              "deps_unknown": "why_deps_unknown", "unconfirmed": "why_unconfirmed", "full_runs": "why_full_runs",
              "changed": "why_changed"}
_HANDLER_PATH = "changewatch.render.handler.RenderDownloadHandler"
_CONDITIONAL_HEADERS = (b"If-None-Match", b"If-Modified-Since", b"If-Match", b"If-Range", b"If-Unmodified-Since")


def render_options(request: Request) -> RenderOptions | None:
    """How *request* is to be rendered (None: it is not); a request that says ``playwright``
    itself is rendered as ``changewatch_render: True`` is. Raises RenderError for bad options."""
    value = request.meta.get(meta.RENDER)
    if value is None and request.meta.get("playwright"):
        value = True
    try:
        return parse_render(value)
    except ValueError as exc:
        raise RenderError(f"render: {exc}") from None


def _renders(handler: Any) -> bool:
    try:
        cls = load_object(handler) if isinstance(handler, str) else handler
    except (ImportError, AttributeError, ValueError, NameError):
        return False
    return isinstance(cls, type) and any(f"{c.__module__}.{c.__qualname__}" == _HANDLER_PATH for c in cls.__mro__)


class RenderMiddleware:
    """Downloader middleware; ``changewatch.Addon`` enables it at 940: after the SSRF guard (a
    refused URL is neither re-checked nor rendered), before ConditionalRequestMiddleware (which
    leaves a rendered request alone)."""

    def __init__(self, crawler: Crawler, runtime: CrawlServices):
        self.crawler = crawler
        self.runtime = runtime
        self.stats = Stats(crawler, "render")
        self.full_runs = runtime.config.render_full_runs
        self.browser = find_browser(runtime.config.render_browser)
        self.unable = None if self.browser else f"there is no browser: {how_to_install()}"
        handlers = crawler.settings.getwithbase("DOWNLOAD_HANDLERS")
        others = {s: handlers.get(s) for s in ("http", "https") if not _renders(handlers.get(s))}
        if others:  # the page would be fetched without rendering, silently
            self.unable = (f"DOWNLOAD_HANDLERS {others} are not {RENDER_HANDLER} (changewatch.Addon sets it): "
                           "nothing would render the page")

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RenderMiddleware:
        mw = cls(crawler, CrawlServices.of(crawler))
        crawler.signals.connect(mw._spider_opened, signal=signals.spider_opened)
        return mw

    def _spider_opened(self, spider: Any) -> None:
        if spider_options(spider).renders and self.unable is not None:
            self.runtime.fail(f"spider {spider.name!r} renders pages and {self.unable}")

    async def process_request(self, request: Request) -> Response | None:
        if request.meta.get(meta._SUBREQUEST) or meta._RENDER_OPTIONS in request.meta:
            return None  # a render's own request, or a retry or redirect of a rendered one
        options = render_options(request)
        if options is None:
            return None
        if self.unable is not None:
            self.runtime.fail(f"{request.url} is to be rendered and {self.unable}")
            raise BrowserMissing(f"render: not rendered: {self.unable}")
        if request.method != "GET":
            raise RenderError(f"render: only GET requests are rendered, not {request.method}")
        request.meta[meta._RENDER_OPTIONS] = options
        request.meta["playwright"] = True
        for name in _CONDITIONAL_HEADERS:  # never on a browser navigation (Chromium aborts it)
            request.headers.pop(name, None)
        if not self.runtime.is_open:
            return None
        return await self._skip_or_render(request, options)

    async def _skip_or_render(self, request: Request, options: RenderOptions) -> Response | None:
        runner = self.runtime.runner
        rows = await runner.call(runner.store.validators, self.runtime.spider, request.url)
        key = request.meta.get(meta.KEY)
        if key is not None:
            rows = [r for r in rows if r.key == key]
        decided = plan(rows, fingerprint=options.fingerprint(), spec=request.meta.get(meta.SPEC),
                       full_runs=self.full_runs, conditional=request.meta.get(meta.CONDITIONAL, True) is not False,
                       confirmation=bool(request.meta.get(meta.CONFIRMATION)))
        request.meta[meta._RENDER_PREVIOUS] = decided.deps
        why = decided.why
        if why is None and decided.deps is not None:
            changed, made, not_modified = await recheck(decided.deps, lambda r: fetch(self.crawler, r),
                                                        vantage=request.meta.get(meta.VANTAGE))
            self.stats.inc("preflight_requests", made)
            self.stats.inc("preflight_not_modified", not_modified)
            if changed is None:
                self.stats.inc("avoided")
                logger.debug("changewatch: %s not rendered: its %d dependencies are unchanged", request.url,
                             len(decided.deps.deps))
                response = Response(request.url, status=304, request=request, flags=["render-avoided"])
                return await answer_not_modified(self.crawler, self.runtime, request, response,
                                                 NotModified(url=request.url, keys=decided.keys,
                                                             links=rows[0].links if rows else None))
            logger.debug("changewatch: %s is rendered: %s", request.url, changed)
            why = "changed"
        self.stats.inc(_WHY_STATS[why or "unknown"])
        return None
