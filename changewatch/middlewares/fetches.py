"""What became of the spider's requests (:class:`changewatch.runtime.fetches.FetchOutcomes`), so
that a crawl of a spider of one's own whose every request was refused, failed or answered with
an error status exits non-zero, saying why, instead of ending as if there had been nothing to do
(the pipeline's end-of-crawl check). Three places, because Scrapy hands a failed request
to no one when it has no errback:

- :class:`FetchFailureMiddleware` (downloader, outermost): a request that failed for good, after
  its retries: refused (the SSRF guard, robots.txt), unresolvable, unreachable, timed out, too
  large. The guard notes the refusals it raises past it itself (a name that resolved to a private
  address, a redirect or an answer from one);
- :class:`ArrivedMiddleware` (spider, before Scrapy's HttpErrorMiddleware): an answer with an
  error status (a 403 block page, a 429, a 404), which that middleware keeps from the callback;
- :class:`ReachedMiddleware` (spider, last): a response handed to a callback.
"""

from __future__ import annotations

from scrapy import Request
from scrapy.crawler import Crawler
from scrapy.http import Response
from twisted.python.failure import Failure

from ..extract.observe import describe_failure, describe_status
from ..runtime.fetches import FetchOutcomes
from ..runtime.services import CrawlServices

__all__ = ["ArrivedMiddleware", "FetchFailureMiddleware", "ReachedMiddleware"]


class _Noting:
    def __init__(self, crawler: Crawler, fetches: FetchOutcomes):
        self.crawler = crawler
        self.fetches = fetches

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> _Noting:
        return cls(crawler, CrawlServices.of(crawler).fetches)


class FetchFailureMiddleware(_Noting):
    """Downloader middleware; ``changewatch.Addon`` enables it at 10, before every other: its
    ``process_exception`` is the last to run, after RetryMiddleware gave up."""

    def process_exception(self, request: Request, exception: Exception) -> None:
        failure = Failure(exception)  # type: ignore[no-untyped-call]
        failure.request = request  # type: ignore[attr-defined]
        self.fetches.failed(request, describe_failure(failure,
                                                      maxsize=self.crawler.settings.getint("DOWNLOAD_MAXSIZE")))


class ArrivedMiddleware(_Noting):
    """Spider middleware; ``changewatch.Addon`` enables it at 45, before HttpErrorMiddleware (50)."""

    def process_spider_input(self, response: Response) -> None:
        if not 200 <= response.status < 300 and response.request is not None:
            self.fetches.failed(response.request, describe_status(response))


class ReachedMiddleware(_Noting):
    """Spider middleware; ``changewatch.Addon`` enables it at 990, after every other that may keep a
    response from the callback."""

    def process_spider_input(self, response: Response) -> None:
        self.fetches.reached_spider()
