"""``BrowserRenderer``: scrapy-playwright's download handler, as changewatch renders with it.

:class:`~changewatch.render.handler.RenderDownloadHandler` builds it on the first request with
``playwright`` in its meta (set by :class:`changewatch.middlewares.RenderMiddleware` for the
requests that need rendering) and hands it every such request, which it renders:

1. its document is fetched by Scrapy (the SSRF guard, redirects, size and time limits); a
   document that is not an HTML page, or answers an error status, is returned as it came;
2. a fresh browser context (service workers blocked) opens a page whose every request is
   answered from a Scrapy fetch (:class:`~changewatch.render.session.RenderSession`), navigates to
   the document, waits for ``wait_for`` and for the network to settle, and reads the DOM;
3. the context is closed, whatever happened: at most CHANGEWATCH_RENDER_CONCURRENCY are open.

One deadline (the watch's ``render.timeout``, else CHANGEWATCH_RENDER_TIMEOUT) bounds all of it.
The browser starts with the first render, not with the crawl.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
from contextlib import suppress
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page
from playwright.async_api import TimeoutError as PlaywrightTimeoutError
from scrapy import Request, Spider
from scrapy.crawler import Crawler
from scrapy.http import Headers, HtmlResponse, Response, TextResponse
from scrapy_playwright.handler import ScrapyPlaywrightDownloadHandler
from scrapy_playwright.page import PageMethod

from .. import meta
from ..config import ChangewatchConfig
from ..core.render_options import RenderOptions
from ..extract.content_types import detect_type
from ..runtime.stats import Stats
from .browser import ClosedPort, browser_args, find_browser, how_to_install
from .errors import BrowserMissing, RenderError
from .fetch import fetch, subrequest
from .session import _NOT_FORWARDED, RenderSession

__all__ = ["BrowserRenderer"]

logger = logging.getLogger(__name__)

#: after ``load`` (and ``wait_for``), the most a render waits for the page's requests to be over
SETTLE_SECONDS = 5.0
#: ...and how long none must have run to call it over
QUIET_SECONDS = 0.5
#: resolves when the page's main thread is idle (its scripts ran): any request they made is ours by then
_IDLE_JS = "() => new Promise(done => requestIdleCallback(() => done(), {timeout: 1000}))"
_DROPPED = (b"Content-Encoding", b"Content-Length", b"Content-Type", b"Transfer-Encoding")


async def _settle(page: Page, options: RenderOptions, deadline: float, session: RenderSession) -> None:
    """A page method (after ``load``): ``wait_for``, then up to SETTLE_SECONDS until the page's
    requests are over (the data a script fetches at load time), never past *deadline*."""
    loop = asyncio.get_running_loop()
    if options.wait_for:
        try:
            await page.wait_for_selector(options.wait_for, state="attached",
                                         timeout=max(1.0, 1000 * (deadline - loop.time())))
        except PlaywrightTimeoutError:
            raise RenderError(f"timeout: no element matched wait_for {options.wait_for!r} before the render "
                              "timeout") from None
    until = min(deadline, loop.time() + SETTLE_SECONDS)
    while loop.time() < until:
        await session.quiet(QUIET_SECONDS, until=until)
        asked = session.requests
        with suppress(PlaywrightError, TimeoutError):
            await asyncio.wait_for(page.evaluate(_IDLE_JS), max(0.05, until - loop.time()))
        await asyncio.sleep(0.05)  # a request a script made reaches the route a moment later
        if session.requests == asked and not session.busy:
            return


class BrowserRenderer(ScrapyPlaywrightDownloadHandler):  # type: ignore[misc]  # untyped
    """Renders the requests :class:`~changewatch.render.handler.RenderDownloadHandler` hands it."""

    def __init__(self, crawler: Crawler, config: ChangewatchConfig) -> None:
        super().__init__(crawler)
        settings = crawler.settings
        self.crawler = crawler
        self.cw_stats = Stats(crawler, "render")
        self.timeout = config.render_timeout
        self.browser_path = find_browser(config.render_browser)
        self.user_agent = str(settings.get("USER_AGENT") or "")
        self.max_bytes = settings.getint("DOWNLOAD_MAXSIZE")
        self.config.browser_type_name = "chromium"
        self.config.max_pages_per_context = 1  # one page per context, closed with it
        self.config.max_contexts = config.render_concurrency
        self.context_semaphore = asyncio.Semaphore(config.render_concurrency)
        self._pages = asyncio.Semaphore(config.render_concurrency)
        self._closed_port: ClosedPort | None = None
        self._started = False
        self._start_lock = asyncio.Lock()
        self._names = itertools.count(1)

    async def _maybe_launch_in_thread(self) -> None:
        """Not at engine start: a crawl that renders nothing starts no Playwright driver."""

    def _engine_started(self) -> Any:
        return None

    async def _start(self) -> None:
        async with self._start_lock:
            if self._started:
                return
            if self.browser_path is None:
                raise BrowserMissing(f"render: no browser to render with: {how_to_install()}")
            self._closed_port = ClosedPort()
            # Chromium keeps its profile under HOME: a job started without one (cron, Scrapyd) gets /tmp
            self.config.launch_options = {"executable_path": self.browser_path, "headless": True,
                                          "args": browser_args(self._closed_port.port),
                                          "env": {**os.environ, "HOME": os.environ.get("HOME") or "/tmp"}}
            await self._launch()
            self._started = True
            logger.info("changewatch: rendering with %s (at most %d pages at once)", self.browser_path,
                        self.config.max_contexts)

    async def _close(self) -> None:
        await super()._close()
        if self._closed_port is not None:
            self._closed_port.close()

    async def _download_request(self, request: Request, spider: Spider | None = None) -> Response:
        options = request.meta.get(meta._RENDER_OPTIONS) or RenderOptions()
        timeout = options.timeout or self.timeout
        try:
            # the deadline runs from when a page is free: waiting for one is no part of the render
            async with self._pages:
                return await asyncio.wait_for(self._render(request, options, timeout, spider), timeout)
        except TimeoutError:
            self.cw_stats.inc("timeouts")
            raise RenderError(f"timeout: the page did not finish rendering within {timeout:g} s") from None
        except RenderError as exc:
            self.cw_stats.inc("timeouts" if str(exc).startswith("timeout") else "errors")
            raise

    async def _render(self, request: Request, options: RenderOptions, timeout: float,
                      spider: Spider | None) -> Response:
        await self._start()
        deadline = asyncio.get_running_loop().time() + timeout
        vantage = request.meta.get(meta.VANTAGE)
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, vs in request.headers.items() for v in vs
                   if k.decode("latin-1").lower() not in _NOT_FORWARDED]
        document = await fetch(self.crawler, subrequest(request.url, headers=headers, vantage=vantage))
        for name in ("redirect_urls", "redirect_reasons"):  # a permanent move of a rendered page is a move too
            if name in document.meta:
                request.meta[name] = document.meta[name]
        if not self._renderable(document):
            self.cw_stats.inc("not_html")
            return document.replace(request=request)
        max_bytes = int(request.meta.get("download_maxsize", self.max_bytes))
        session = RenderSession(lambda r: fetch(self.crawler, r), options, request.url, document,
                                max_bytes=max_bytes, stats=self.cw_stats, vantage=vantage)
        rendered = await self._in_browser(request, document.url, session, options, deadline, spider)
        if session.too_large:
            self.cw_stats.inc("too_large")
            raise RenderError(f"too large: the page and the resources it loaded came to more than {max_bytes} "
                              "bytes (DOWNLOAD_MAXSIZE)")
        request.meta[meta._RENDER_DEPS] = session.dependency_set(request.meta.get(meta._RENDER_PREVIOUS)).encode()
        self.cw_stats.inc("rendered")
        return self._response(request, document, rendered)

    @staticmethod
    def _renderable(document: Response) -> bool:
        if not 200 <= document.status < 300:
            return False
        content_type = document.headers.get(b"Content-Type")
        return detect_type(content_type.decode("latin-1") if content_type else None, document.body,
                           document.url) == "html"

    async def _in_browser(self, request: Request, url: str, session: RenderSession, options: RenderOptions,
                          deadline: float, spider: Spider | None) -> TextResponse:
        name = f"changewatch-render-{next(self._names)}"
        left_ms = max(1.0, 1000 * (deadline - asyncio.get_running_loop().time()))
        page_request = request.replace(url=url, meta={
            **request.meta, "playwright": True, "playwright_context": name, "playwright_include_page": False,
            "playwright_context_kwargs": {"service_workers": "block", "accept_downloads": False,
                                          "user_agent": self.user_agent or None},
            "playwright_page_init_callback": session.install,
            "playwright_page_goto_kwargs": {"wait_until": "load", "timeout": left_ms},
            "playwright_page_methods": [PageMethod(_settle, options, deadline, session)]})
        try:
            rendered = await super()._download_request(page_request, spider)
        except RenderError:
            raise
        except PlaywrightTimeoutError:
            raise RenderError("timeout: the page did not load before the render timeout") from None
        except PlaywrightError as exc:
            what = "the browser crashed" if session.crashed or "closed" in str(exc) else "the browser failed"
            self.cw_stats.inc("crashes" if session.crashed else "browser_errors")
            raise RenderError(f"render: {what} rendering {url}: {str(exc).splitlines()[0][:200]}") from None
        finally:
            session.close()
            await self._close_context(name)
        if not session.installed:
            raise RenderError("render: the page's requests could not be intercepted; it was not rendered")
        if not isinstance(rendered, TextResponse):
            raise RenderError("render: the page turned into a download")
        return rendered

    async def _close_context(self, name: str) -> None:
        wrapper = self.context_wrappers.get(name)
        if wrapper is not None:
            with suppress(Exception):
                await wrapper.context.close()

    @staticmethod
    def _response(request: Request, document: Response, rendered: TextResponse) -> HtmlResponse:
        headers = Headers({k: v for k, v in document.headers.items() if k not in _DROPPED})
        headers[b"Content-Type"] = b"text/html; charset=utf-8"
        return HtmlResponse(url=document.url, status=document.status, headers=headers,
                            body=rendered.text.encode("utf-8"), request=request, flags=["rendered"],
                            ip_address=document.ip_address)
