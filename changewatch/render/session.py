"""One render's traffic: every request the page makes is answered from a fetch Scrapy made.

The browser never fetches anything itself (it is launched with a closed network:
:mod:`changewatch.render.browser`). Each request it makes is intercepted (``page.route``): a
blocked resource type, a stream (WebSocket, EventSource) or a scheme other than http(s) is
refused; anything else is downloaded by Scrapy (:mod:`changewatch.render.fetch`: the SSRF guard
resolves and checks every name, follows and checks every redirect) and given to the page as it
came. What the page was given is its dependency set (:mod:`changewatch.render.deps`); the bytes
of everything it loaded count against DOWNLOAD_MAXSIZE together.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from playwright.async_api import Page, Route, WebSocketRoute
from playwright.async_api import Request as BrowserRequest
from scrapy import Request
from scrapy.http import Response
from twisted.python.failure import Failure

from ..core.render_options import RenderOptions
from ..core.validators import accept_validators
from ..extract.observe import describe_failure
from ..guard import RefusedRequest
from ..runtime.stats import Stats
from .deps import Dependency, DependencySet, is_dependency
from .fetch import subrequest

__all__ = ["RenderSession"]

logger = logging.getLogger(__name__)

Fetch = Callable[[Request], Awaitable[Response]]

#: request headers the browser sets itself; any other a script set, and the server may answer by it
_BROWSER_HEADERS = frozenset({
    "accept", "accept-encoding", "accept-language", "cache-control", "connection", "content-length", "content-type",
    "cookie", "dnt", "host", "origin", "pragma", "priority", "referer", "upgrade-insecure-requests", "user-agent"})
#: not passed on to Scrapy: it sets its own (User-Agent, Accept-Language of the vantage point,
#: compression it can undo, its cookie jar) or they belong to the browser's connection
_NOT_FORWARDED = frozenset({"accept-encoding", "accept-language", "connection", "content-length", "cookie", "host",
                            "if-modified-since", "if-none-match", "if-match", "if-range", "keep-alive",
                            "proxy-authorization", "te", "transfer-encoding", "upgrade", "user-agent"})
#: not passed back to the browser: the body it is given is whole and decoded
_NOT_RETURNED = frozenset({b"content-encoding", b"content-length", b"transfer-encoding", b"connection", b"keep-alive"})
_STREAMS = frozenset({"eventsource", "websocket"})
_NO_NETWORK = frozenset({"data", "blob", "about"})


def _returned_headers(response: Response) -> dict[str, str]:
    headers: dict[str, str] = {}
    for name, values in response.headers.items():
        if name.lower() in _NOT_RETURNED:
            continue
        text = [v.decode("latin-1") for v in values]
        headers[name.decode("latin-1")] = ("\n" if name.lower() == b"set-cookie" else ", ").join(text)
    return headers


class RenderSession:
    """Created per render, installed on its page by scrapy-playwright's page init callback."""

    def __init__(self, fetch: Fetch, options: RenderOptions, asked: str, document: Response, *, max_bytes: int,
                 stats: Stats, vantage: Any = None):
        self.fetch = fetch
        self.options = options
        self.document = document
        self.max_bytes = max_bytes
        self.stats = stats
        self.vantage = vantage
        self.installed = False
        self.closed = False
        self.crashed = False
        self.too_large = False
        self.script_errors = 0
        self.refusals: list[str] = []
        self.unknown: str | None = None
        self._deps: dict[str, Dependency] = {}
        self._inflight: set[asyncio.Task[Response]] = set()
        self._loaded = 0
        self._navigated = False
        self._last_activity = 0.0
        self.requests = 0  # requests the page made (for settling: did it ask for more?)
        self._first = self._dependency(asked, "document", document)  # asked: redirects are re-checked too

    async def install(self, page: Page, _request: Any) -> None:
        """scrapy-playwright's ``playwright_page_init_callback``: routes registered after its own
        run first, and answer every request, so its handler (which lets the browser fetch) never
        runs. Called again when scrapy-playwright retries on a new page: starts afresh."""
        self._deps.clear()
        self._loaded, self._navigated, self.unknown = len(self.document.body), False, None
        await page.route("**", self._route)
        await page.route_web_socket("**", self._websocket)
        page.on("pageerror", self._script_error)
        page.on("crash", self._crash)
        self.installed = True

    def _script_error(self, error: Any) -> None:
        self.script_errors += 1
        self.stats.inc("script_errors")
        logger.debug("changewatch: a script of %s threw: %s", self.document.url, error)

    def _crash(self, _page: Any) -> None:
        self.crashed = True

    async def _websocket(self, ws: WebSocketRoute) -> None:
        # Never connected: a page's data over a WebSocket would be no dependency we could re-check,
        # and the connection no request the guard sees. The page sees it close.
        self.stats.inc("websockets_refused")
        await ws.close(code=1008, reason="changewatch renders without WebSockets")

    async def _route(self, route: Route, request: BrowserRequest) -> None:
        loop = asyncio.get_running_loop()
        self._last_activity = loop.time()
        self.requests += 1
        try:
            await self._answer(route, request)
        except Exception as exc:  # the page or context closed meanwhile (a timeout, the end)
            logger.debug("changewatch: render of %s: %s not answered: %r", self.document.url, request.url, exc)
        finally:
            self._last_activity = loop.time()

    @property
    def busy(self) -> bool:
        return bool(self._inflight)

    async def quiet(self, seconds: float, *, until: float) -> None:
        """Wait until no request of the page has been running or started for *seconds* (the
        data its scripts fetch after ``load``), or until the loop's time *until*. Every request
        of the page passes through :meth:`_route`, so this knows them all."""
        loop = asyncio.get_running_loop()
        while loop.time() < until:
            idle = loop.time() - self._last_activity
            if not self._inflight and idle >= seconds:
                return
            await asyncio.sleep(max(0.02, min(seconds - idle if not self._inflight else 0.05, until - loop.time())))

    async def _answer(self, route: Route, request: BrowserRequest) -> None:
        scheme = urlsplit(request.url).scheme.lower()
        if scheme in _NO_NETWORK:
            await route.continue_()  # nothing leaves the browser for these
            return
        kind = request.resource_type
        if self.closed or self.too_large or scheme not in ("http", "https") or kind in _STREAMS:
            self.stats.inc("blocked")
            await route.abort("blockedbyclient")
            return
        if kind in self.options.block:
            self.stats.inc("blocked")
            await route.abort("blockedbyclient")
            return
        response = await self._response(request)
        if response is None:
            await route.abort("failed")
            return
        self._loaded += len(response.body) if response is not self.document else 0
        if self.max_bytes and self._loaded > self.max_bytes:
            self.too_large = True
            await route.abort("blockedbyclient")
            return
        await route.fulfill(status=response.status, headers=_returned_headers(response), body=response.body)

    async def _response(self, request: BrowserRequest) -> Response | None:
        """The response for *request* (the document as prefetched for the first navigation), noted
        as a dependency; None when it could not be had (refused, failed, too large)."""
        if not self._navigated and request.is_navigation_request() and request.url == self.document.url:
            self._navigated = True
            self._deps[self._first.url] = self._first
            return self.document
        dependency = is_dependency(request.resource_type)
        method = request.method.upper()
        headers = await request.all_headers()
        if dependency and method not in ("GET", "HEAD"):
            self.unknown = self.unknown or f"a {method} request for {request.url} (not re-checkable by GET)"
        if dependency and "authorization" in headers:
            self.unknown = self.unknown or f"a request for {request.url} carried credentials"
        sub = subrequest(request.url, method=method, body=request.post_data_buffer, vantage=self.vantage,
                         headers=[(n, v) for n, v in headers.items() if n not in _NOT_FORWARDED])
        task = asyncio.ensure_future(self.fetch(sub))
        self._inflight.add(task)
        try:
            response = await task
        except Exception as exc:
            self._failed(request, exc, dependency)
            return None
        finally:
            self._inflight.discard(task)
        self.stats.inc("subrequests")
        if dependency and method in ("GET", "HEAD") and request.url not in self._deps:
            self._deps[request.url] = self._dependency(request.url, request.resource_type, response, headers)
        return response

    def _failed(self, request: BrowserRequest, exc: Exception, dependency: bool) -> None:
        failure = Failure(exc)  # type: ignore[no-untyped-call]
        why = describe_failure(failure) if not isinstance(exc, asyncio.CancelledError) else "cancelled"
        if isinstance(exc, RefusedRequest):
            self.stats.inc("refused")
            self.refusals.append(f"{request.url}: {exc}")
        elif why.startswith("too large"):
            self.too_large = True
        logger.debug("changewatch: render of %s: %s failed: %s", self.document.url, request.url, why)
        if dependency:
            self.unknown = self.unknown or f"{request.url} failed to load ({why})"

    @staticmethod
    def _dependency(url: str, kind: str, response: Response, headers: dict[str, str] | None = None) -> Dependency:
        h = response.headers
        etag, last_modified, _ = accept_validators(h.get(b"ETag"), h.get(b"Last-Modified"), h.get(b"Date"),
                                                   datetime.now(UTC))
        own = tuple(sorted((n, v) for n, v in (headers or {}).items()
                           if n not in _BROWSER_HEADERS and not n.startswith("sec-")))
        if kind in ("xhr", "fetch") and headers and "accept" in headers:
            own = (("accept", headers["accept"]), *own)
        return Dependency(url, kind, response.status, hashlib.sha256(response.body).hexdigest(),
                          response.url if response.url != url else None, etag, last_modified, own)

    def dependency_set(self, previous: DependencySet | None) -> DependencySet:
        """What the page was made from, once it was read (a request still loading then makes the
        set unknown: what it would have brought is not in the page, and might be next time)."""
        unknown = self.unknown
        if unknown is None and self._inflight:
            unknown = f"{len(self._inflight)} request(s) still loading when the page was read"
        deps = tuple(self._deps.values()) or (self._first,)
        return DependencySet(self.options.fingerprint(), deps, unknown).after(previous)

    def close(self) -> None:
        self.closed = True
        for task in self._inflight:
            task.cancel()
