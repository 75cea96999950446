"""``RenderDownloadHandler``: the http and https download handler ``changewatch.Addon`` installs.

A plain request is Scrapy's HTTP/1.1 handler's, untouched. A request with ``playwright`` in its
meta (set by :class:`changewatch.middlewares.RenderMiddleware` for the requests that need
rendering) goes to :class:`~changewatch.render.renderer.BrowserRenderer`, scrapy-playwright's
handler as changewatch renders with it, built on the first such request: a crawl that renders
nothing never imports Playwright (its import is a fixed cost of every crawl otherwise).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from scrapy import Request
from scrapy.core.downloader.handlers.http11 import HTTP11DownloadHandler
from scrapy.crawler import Crawler
from scrapy.http import Response
from scrapy.utils.reactor import verify_installed_reactor

from ..config import ChangewatchConfig, ConfigError

if TYPE_CHECKING:
    from .renderer import BrowserRenderer

__all__ = ["RenderDownloadHandler"]

_ASYNCIO_REACTOR = "twisted.internet.asyncioreactor.AsyncioSelectorReactor"


class RenderDownloadHandler(HTTP11DownloadHandler):
    """``DOWNLOAD_HANDLERS`` for http and https (``changewatch.Addon`` sets it)."""

    def __init__(self, crawler: Crawler) -> None:
        verify_installed_reactor(_ASYNCIO_REACTOR)  # scrapy-playwright's requirement, said at start
        super().__init__(crawler)
        settings = crawler.settings
        if settings.get("PLAYWRIGHT_CDP_URL") or settings.get("PLAYWRIGHT_CONNECT_URL"):
            raise ConfigError("PLAYWRIGHT_CDP_URL / PLAYWRIGHT_CONNECT_URL: changewatch renders only in a browser it "
                              "launches itself, whose network it closes (docs/security.md); remove them")
        self.config = ChangewatchConfig.from_settings(settings)
        self._renderer: BrowserRenderer | None = None
        self._renderer_lock = asyncio.Lock()

    async def download_request(self, request: Request) -> Response:
        if not request.meta.get("playwright"):
            return await super().download_request(request)
        renderer = self._renderer or await self._build_renderer()
        response: Response = await renderer.download_request(request)
        return response

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
