"""Requests changewatch makes on a rendered page's behalf (what its browser asks for, and the
re-checks of its dependencies): plain Scrapy downloads through every downloader middleware, so
the SSRF guard, size and time limits, redirects, cookies and the vantage point apply to them as
to any request. They take download slots of their own, so that renders holding a site's slots
never wait for slots their own resources need."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from scrapy import Request
from scrapy.crawler import Crawler
from scrapy.http import Response
from scrapy.http.request import NO_CALLBACK

from .. import meta

__all__ = ["SLOT_PREFIX", "fetch", "subrequest"]

SLOT_PREFIX = "changewatch-render:"


def subrequest(url: str, *, method: str = "GET", headers: Iterable[tuple[str, str]] = (), body: bytes | None = None,
               vantage: Any = None) -> Request:
    """A request for *url* made for a render: not filtered, not retried (the render has one time
    budget), robots.txt not asked (a browser fetches a page's resources as the page says; the
    page itself was checked), not conditional unless the caller adds validators itself, and for
    no spider callback (a crawl none of whose pages reached the spider does not count them)."""
    request_meta: dict[str, Any] = {meta._SUBREQUEST: True, "dont_obey_robotstxt": True, "dont_retry": True,
                                    "download_slot": SLOT_PREFIX + (urlsplit(url).hostname or "")}
    if vantage is not None:
        request_meta[meta.VANTAGE] = vantage
    return Request(url, method=method, headers=dict(headers) or None, body=body, meta=request_meta,
                   dont_filter=True, callback=NO_CALLBACK)


async def fetch(crawler: Crawler, request: Request) -> Response:
    """Download *request* through the downloader middlewares (redirects followed: each hop is
    checked by the guard as its own request). Raises what the download raises."""
    assert crawler.engine is not None
    return await crawler.engine.download_async(request)
