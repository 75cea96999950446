"""Scrapy's RedirectMiddleware and HttpCompressionMiddleware, noting the requests they drop.

Both end a request by raising ``IgnoreRequest`` from ``process_response``: RedirectMiddleware past
``REDIRECT_MAX_TIMES`` redirections (a redirect loop), HttpCompressionMiddleware when a body
unpacks past ``DOWNLOAD_MAXSIZE`` (a compression bomb). An exception raised there reaches no
downloader middleware's ``process_exception`` and, without an errback, no one at all: a crawl of a
spider of one's own whose every request ended so would exit 0 as if there had been nothing to do.
These note why in the crawl's :class:`~changewatch.runtime.fetches.FetchOutcomes` (in the words
of an error record, :func:`~changewatch.extract.observe.describe_failure`) and raise it on, so
Scrapy and an errback see what they saw before. :class:`changewatch.Addon` puts each in the place
of Scrapy's unless the project's ``DOWNLOADER_MIDDLEWARES`` names Scrapy's own;
changewatch's :class:`~changewatch.middlewares.MetaRefreshMiddleware` notes its loops the same way.
"""

from __future__ import annotations

from typing import Any, Self

from scrapy import Request, Spider
from scrapy.crawler import Crawler
from scrapy.downloadermiddlewares.httpcompression import HttpCompressionMiddleware as ScrapyHttpCompressionMiddleware
from scrapy.downloadermiddlewares.redirect import RedirectMiddleware as ScrapyRedirectMiddleware
from scrapy.exceptions import IgnoreRequest
from scrapy.http import Response
from twisted.python.failure import Failure

from ..extract.observe import describe_failure
from ..runtime.services import CrawlServices

__all__ = ["HttpCompressionMiddleware", "NotesRedirectLoops", "RedirectMiddleware"]


def note_dropped(crawler: Crawler, request: Request, exc: IgnoreRequest) -> None:
    """*request* was dropped by a downloader middleware's ``process_response``, raising *exc*."""
    failure = Failure(exc)  # type: ignore[no-untyped-call]
    failure.request = request  # type: ignore[attr-defined]
    why = describe_failure(failure, maxsize=crawler.settings.getint("DOWNLOAD_MAXSIZE"))
    CrawlServices.of(crawler).fetches.failed(request, why)


class NotesRedirectLoops:
    """Mixed into a redirect middleware of Scrapy's: the redirection it refuses is noted."""

    crawler: Crawler

    def _redirect(self, redirected: Request, request: Request, reason: Any) -> Request:
        try:
            return super()._redirect(redirected, request, reason)  # type: ignore[misc,no-any-return]
        except IgnoreRequest as exc:
            note_dropped(self.crawler, request, exc)
            raise


class RedirectMiddleware(NotesRedirectLoops, ScrapyRedirectMiddleware):
    """Scrapy's RedirectMiddleware (same settings, same redirects); a loop it ends is noted."""


class HttpCompressionMiddleware(ScrapyHttpCompressionMiddleware):
    """Scrapy's HttpCompressionMiddleware (same settings, same bodies); a bomb it drops is noted."""

    crawler: Crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        middleware = super().from_crawler(crawler)
        middleware.crawler = crawler
        return middleware

    def process_response(self, request: Request, response: Response,
                         spider: Spider | None = None) -> Request | Response:
        try:
            return super().process_response(request, response)
        except IgnoreRequest as exc:
            note_dropped(self.crawler, request, exc)
            raise
