"""``RenderDownloadHandler``: the http and https download handler ``changewatch.Addon`` installs.

A plain request is Scrapy's HTTP/1.1 handler's, which also notes each response's header lines as
served for evidence (:mod:`changewatch.render.served`). A request with ``playwright`` in its
meta (set by :class:`changewatch.middlewares.RenderMiddleware` for the requests that need
rendering) goes to :class:`~changewatch.render.renderer.BrowserRenderer`, scrapy-playwright's
handler as changewatch renders with it, built on the first such request: a crawl that renders
nothing never imports Playwright (its import is a fixed cost of every crawl otherwise).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from scrapy import Request
from scrapy.core.downloader.handlers.http11 import HTTP11DownloadHandler
from scrapy.crawler import Crawler
from scrapy.exceptions import ResponseDataLossError
from scrapy.http import Response
from scrapy.utils._download_handlers import get_dataloss_msg, wrap_twisted_exceptions
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.reactor import verify_installed_reactor

from ..config import ChangewatchConfig, ConfigError
from ..runtime.origins import ServedHeaders
from ..runtime.services import CrawlServices
from .served import ServedHeadersAgent, ServedHeadersFactory

if TYPE_CHECKING:
    from .renderer import BrowserRenderer

__all__ = ["RenderDownloadHandler"]

logger = logging.getLogger(__name__)

_ASYNCIO_REACTOR = "twisted.internet.asyncioreactor.AsyncioSelectorReactor"


class RenderDownloadHandler(HTTP11DownloadHandler):
    """``DOWNLOAD_HANDLERS`` for http and https (``changewatch.Addon`` sets it)."""

    def __init__(self, crawler: Crawler) -> None:
        verify_installed_reactor(_ASYNCIO_REACTOR)  # scrapy-playwright's requirement, said at start
        super().__init__(crawler)
        self._pool._factory = ServedHeadersFactory
        settings = crawler.settings
        if settings.get("PLAYWRIGHT_CDP_URL") or settings.get("PLAYWRIGHT_CONNECT_URL"):
            raise ConfigError("PLAYWRIGHT_CDP_URL / PLAYWRIGHT_CONNECT_URL: changewatch renders only in a browser it "
                              "launches itself, whose network it closes (docs/security.md); remove them")
        self.config = ChangewatchConfig.from_settings(settings)
        self._renderer: BrowserRenderer | None = None
        self._served: ServedHeaders | None = None
        self._renderer_lock = asyncio.Lock()

    async def download_request(self, request: Request) -> Response:
        if not request.meta.get("playwright"):
            return await self._download_plain(request)
        renderer = self._renderer or await self._build_renderer()
        response: Response = await renderer.download_request(request)
        return response

    async def _download_plain(self, request: Request) -> Response:
        """HTTP11DownloadHandler.download_request with an agent that notes the headers as served
        (the crawl's, when it has changewatch's runtime)."""
        if self._served is None:
            services = self._crawler.get_extension(CrawlServices)
            if services is None:
                return await super().download_request(request)
            self._served = services.served_headers
        agent = ServedHeadersAgent(self._served.keep, contextFactory=self._contextFactory,
                                   bindAddress=self._bind_address, pool=self._pool, maxsize=self._default_maxsize,
                                   warnsize=self._default_warnsize, fail_on_dataloss=self._fail_on_dataloss,
                                   crawler=self._crawler, tls_verbose_logging=self._tls_verbose_logging)
        try:
            with wrap_twisted_exceptions():
                response: Response = await maybe_deferred_to_future(agent.download_request(request))
                return response
        except ResponseDataLossError:
            if not self._fail_on_dataloss_warned:
                logger.warning(get_dataloss_msg(request.url))
                self._fail_on_dataloss_warned = True
            raise

    async def _build_renderer(self) -> BrowserRenderer:
        async with self._renderer_lock:
            if self._renderer is None:
                from .renderer import BrowserRenderer

                self._renderer = BrowserRenderer(self._crawler, self.config)
            return self._renderer

    async def close(self) -> None:
        await super().close()
        if self._renderer is not None:
            await self._renderer.close()
