"""``SSRFGuardMiddleware``: refuse requests to places a crawl must not reach (docs/security.md).

It checks each request's URL text (fast, and named: scheme, credentials, IP literals in any
spelling, loopback and metadata names), each redirect's target scheme, and the address each
response came from; it makes sure the reactor resolves names through :class:`GuardedResolver`,
and turns that resolver's refusals, which reach Scrapy as DNS failures, into named refusals.
"""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urljoin, urlsplit

from scrapy import Request
from scrapy.crawler import Crawler
from scrapy.exceptions import CannotResolveHostError, IgnoreRequest, NotConfigured
from scrapy.http import Response
from scrapy.utils.httpobj import urlparse_cached
from scrapy.utils.misc import load_object
from twisted.internet.error import DNSLookupError

from ..config import ChangewatchConfig
from ..core.addresses import GuardConfig, Refusal
from ..core.urls import shown_url
from ..runtime.services import CrawlServices
from ..runtime.stats import Stats
from .resolver import GuardedResolver, installed_guard

__all__ = ["RefusedRequest", "SSRFGuardMiddleware", "reports_refusals"]

logger = logging.getLogger(__name__)

_TWISTED_HANDLERS = frozenset({"scrapy.core.downloader.handlers.http11.HTTP11DownloadHandler",
                               "scrapy.core.downloader.handlers.http2.H2DownloadHandler"})
_PLAYWRIGHT_HANDLER = "scrapy_playwright.handler.ScrapyPlaywrightDownloadHandler"
_RENDER_HANDLER = "changewatch.render.handler.RenderDownloadHandler"


class RefusedRequest(IgnoreRequest):
    """The SSRF guard refused a request; ``str()`` is ``<rule>: <detail>``."""

    def __init__(self, refusal: Refusal):
        super().__init__(str(refusal))
        self.refusal = refusal


#: Marks an errback that reports a refused request itself (as an ``error`` record): the guard
#: then logs its refusal at DEBUG only. Every other refusal (scrapy shell, fetch, parse, a
#: spider of the user's) is one WARNING, or Scrapy would drop the request without a word.
_REPORTS_REFUSALS = "changewatch_reports_refusals"


def reports_refusals(errback: Any) -> Any:
    """Decorate an errback that turns a :class:`RefusedRequest` into an ``error`` record."""
    setattr(errback, _REPORTS_REFUSALS, True)
    return errback


def _in_context(refusal: Refusal, request: Request) -> Refusal:
    redirects = request.meta.get("redirect_urls")
    if redirects:
        return Refusal(refusal.rule, f"{refusal.detail} (redirected from {shown_url(redirects[-1])})")
    return refusal


class SSRFGuardMiddleware:
    """Downloader middleware; ``changewatch.Addon`` enables it (priority 560: its
    ``process_exception`` names a resolver refusal before RetryMiddleware would retry it)."""

    def __init__(self, crawler: Crawler, config: GuardConfig):
        self.crawler = crawler
        self.config = config
        self.stats = Stats(crawler, "ssrf")
        self._resolver_checked = False
        self._runtime: Any = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SSRFGuardMiddleware:
        config = ChangewatchConfig.from_settings(crawler.settings).guard
        if not config.policy.enabled:
            raise NotConfigured("the SSRF guard is off (CHANGEWATCH_SSRF_ENABLED = False)")
        return cls(crawler, config)

    def process_request(self, request: Request) -> None:
        if not self._resolver_checked:
            self._resolver_checked = True
            self._ensure_resolver()
        if self._trusted(request):
            return
        refusal = self.config.policy.url_refusal(request.url)
        if refusal is not None:
            self.stats.inc("refused_url")
            raise self._refused(refusal, request)

    def process_response(self, request: Request, response: Response) -> Response:
        refusal = self._redirect_refusal(request, response)
        if refusal is not None:
            self.stats.inc("refused_redirect")
            raise self._refused_late(refusal, request)
        ip = response.ip_address
        if ip is not None and not request.meta.get("proxy") and self.config.policy.checks_addresses \
                and not self._trusted(request):
            refusal = self.config.policy.address_refusal(ip, urlparse_cached(request).hostname or "")
            if refusal is not None:
                self.stats.inc("refused_peer")
                raise self._refused_late(refusal, request)
        return response

    def process_exception(self, request: Request, exception: Exception) -> None:
        if not isinstance(exception, (CannotResolveHostError, DNSLookupError)) or \
                not self.crawler.settings.getbool("TWISTED_REACTOR_ENABLED", True):
            return
        from twisted.internet import reactor

        guard = installed_guard(reactor)
        # Through a proxy, the connection (and the lookup that was refused) is the proxy's.
        proxy = request.meta.get("proxy")
        host = (urlsplit(proxy).hostname if proxy else urlparse_cached(request).hostname) or ""
        refusal = guard.refusal(host) if guard is not None else None
        if refusal is not None:
            self.stats.inc("refused_dns")
            raise self._refused_late(refusal, request) from exception

    @staticmethod
    def _refused(refusal: Refusal, request: Request) -> RefusedRequest:
        """The exception that refuses *request*, logged once: Scrapy drops an IgnoreRequest
        without a word, so ``scrapy shell`` would print only ``None``."""
        exc = RefusedRequest(_in_context(refusal, request))
        errback = getattr(request.errback, "__func__", request.errback)
        reported = getattr(errback, _REPORTS_REFUSALS, False) or _robots_txt(request)
        level = logging.DEBUG if reported else logging.WARNING
        logger.log(level, "SSRF guard refused %s %s: %s", request.method, shown_url(request.url), exc)
        return exc

    def _refused_late(self, refusal: Refusal, request: Request) -> RefusedRequest:
        """:meth:`_refused`, for a refusal raised from process_response or process_exception: no
        middleware's process_exception sees it, so it is noted for the crawl's end here
        (``CrawlServices.fetches``: a crawl none of whose requests reached the spider says why)."""
        exc = self._refused(refusal, request)
        runtime = self._runtime_or_none()
        if runtime is not None:
            runtime.fetches.failed(request, f"refused: {exc}")
        return exc

    def _trusted(self, request: Request) -> bool:
        """A local site changewatch itself serves for this crawl (``CrawlServices.trust_origin``)."""
        runtime = self._runtime_or_none()
        return runtime is not None and runtime.trusts(request.url)

    def _trusted_origins(self) -> set[tuple[str, str, int | None]]:
        runtime = self._runtime_or_none()
        return set(runtime.trusted_origins) if runtime is not None else set()

    def _runtime_or_none(self) -> Any:
        if self._runtime is None:

            self._runtime = self.crawler.get_extension(CrawlServices) or False
        return self._runtime or None

    def _redirect_refusal(self, request: Request, response: Response) -> Refusal | None:
        """A redirect to another scheme (file:, ftp:, gopher:...) that RedirectMiddleware would
        silently pass on as a 3xx page."""
        location = response.headers.get(b"Location")
        if not (300 <= response.status < 400 and location) or request.meta.get("dont_redirect"):
            return None
        target = urljoin(request.url, location.decode("latin-1").strip())
        refusal = self.config.policy.url_refusal(target)
        if refusal is None or refusal.rule != "scheme":
            return None  # an http(s) target is checked as the new request it becomes
        return Refusal("scheme", f"redirect to {shown_url(target)} (only http and https are fetched)")

    def _ensure_resolver(self) -> None:
        """Connections are guarded only if the reactor resolves names through GuardedResolver. It is
        installed whatever the download handlers are (it never weakens anything): a handler that
        is Scrapy's HTTP/1.1 one for plain requests (scrapy-playwright's, changewatch's
        RenderDownloadHandler) connects through it; others are warned about."""
        settings = self.crawler.settings
        if not settings.getbool("TWISTED_REACTOR_ENABLED", True):
            logger.warning("SSRF guard: downloads do not go through Twisted's resolver (no Twisted reactor): only "
                           "URLs, redirects and response addresses are checked, not DNS answers")
            return
        handlers = settings.getwithbase("DOWNLOAD_HANDLERS")
        others = {s: h for s in ("http", "https") if (h := handlers.get(s)) and not _resolves_through_twisted(h)}
        if others:
            logger.warning("SSRF guard: downloads do not go through Twisted's resolver (%s): only URLs, redirects "
                           "and response addresses are checked, not DNS answers", others)
        browsers = {s: h for s in ("http", "https") if (h := handlers.get(s)) and _unguarded_browser(h)}
        if browsers:
            logger.warning("SSRF guard: %s renders in a browser that fetches by itself, unguarded: use "
                           "changewatch.render.RenderDownloadHandler (docs/security.md)", browsers)
        from twisted.internet import reactor

        guard = installed_guard(reactor)
        if guard is None or guard.provisional:
            inner = guard.inner if guard is not None else reactor.nameResolver
            guard = GuardedResolver.for_config(reactor, self.config, inner)
            guard.install_on_reactor()
            if self._trusted_origins():  # trusted before the guard was installed
                for scheme, host, port in self._trusted_origins():
                    guard.trust(host, port or (443 if scheme == "https" else 80))
            logger.info("SSRF guard: installed changewatch.guard.GuardedResolver as the reactor's name resolver "
                        "(the process started without it: %s)",
                        "its settings were not valid" if inner is not reactor.nameResolver
                        else "changewatch.Addon is not in the process's ADDONS")
        elif guard.policy != self.config.policy:
            logger.warning("SSRF guard: this crawler's SSRF settings (CHANGEWATCH_ALLOW_PRIVATE and the guard's "
                           "allowlists) differ from the process's; name resolution uses the process's (%s)",
                           guard.policy)


def _robots_txt(request: Request) -> bool:
    """RobotsTxtMiddleware's request for a page's robots.txt: the page's own request is refused
    (and logged or reported) too, for the same reason."""
    return bool(request.meta.get("dont_obey_robotstxt")) and urlparse_cached(request).path == "/robots.txt"


def _lineage(handler: Any) -> set[str]:
    """The dotted paths of *handler*'s class and its bases (nothing for one that cannot be loaded:
    Scrapy says so when it builds it)."""
    try:
        obj = load_object(handler) if isinstance(handler, str) else handler
    except (ImportError, AttributeError, ValueError, NameError):
        return set()
    return {f"{c.__module__}.{c.__qualname__}" for c in obj.__mro__} if isinstance(obj, type) else set()


def _resolves_through_twisted(handler: Any) -> bool:
    """Scrapy's HTTP/1.1 or HTTP/2 handler, or a subclass (which falls back to it, as
    scrapy-playwright's does for requests it does not render)."""
    return bool(_lineage(handler) & _TWISTED_HANDLERS)


def _unguarded_browser(handler: Any) -> bool:
    """scrapy-playwright's own handler, whose browser resolves and fetches by itself."""
    names = _lineage(handler)
    return _PLAYWRIGHT_HANDLER in names and _RENDER_HANDLER not in names
