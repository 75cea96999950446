"""Rendering JavaScript pages in Chromium (scrapy-playwright), only when a cheap check says they
may have changed: docs/rendering.md.

- :mod:`.options`: a watch's ``render`` (pure);
- :mod:`.deps`: a rendered page's dependency set and when it is unchanged (pure);
- :mod:`.preflight`: whether to re-check instead of rendering, and the re-check;
- :mod:`.browser`: which browser, launched with a closed network;
- :mod:`.session`: every request of a rendered page answered from a Scrapy fetch (the SSRF guard);
- :mod:`.handler`: the download handler (``RenderDownloadHandler``), Scrapy's HTTP/1.1 one for
  a request that is not rendered;
- :mod:`.renderer`: scrapy-playwright's handler as changewatch renders with it, imported with the
  first rendered request (it imports Playwright);
- :class:`changewatch.middlewares.RenderMiddleware` decides which requests are rendered.
"""

from __future__ import annotations

from typing import Any

from ..core.render_options import BLOCKABLE, DEFAULT_BLOCK, RenderOptions, parse_render
from .errors import BrowserMissing, RenderError

__all__ = ["BLOCKABLE", "DEFAULT_BLOCK", "BrowserMissing", "RenderDownloadHandler", "RenderError", "RenderOptions",
           "parse_render"]


def __getattr__(name: str) -> Any:
    # imported on use: the handler imports Scrapy's HTTP/1.1 download handler, which loading the
    # spiders (scrapy list, the CLI) has no need of
    if name == "RenderDownloadHandler":
        from .handler import RenderDownloadHandler

        return RenderDownloadHandler
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
