"""Scrapy's RobotsTxtMiddleware logs a robots.txt that could not be downloaded (a host that does
not resolve, refuses the connection, times out) as an ERROR line with the exception's traceback,
40 lines of Scrapy's and Twisted's frames, for every such host on every run. The add-on turns
ROBOTSTXT_OBEY on; the page's own failure is its watch's ``error`` record (``dns: …``), so the
line is kept and the traceback, which says nothing more of the site, is left out."""

from __future__ import annotations

import logging

from scrapy import exceptions as scrapy_exceptions
from twisted.internet import error as twisted_errors

__all__ = ["quiet_robots_download_errors"]

#: a download that failed on the network, as Scrapy 2.14+ and Twisted raise it
_DOWNLOAD_FAILURES: tuple[type[BaseException], ...] = tuple(
    cls for cls in (
        *(getattr(scrapy_exceptions, name, None) for name in (
            "CannotResolveHostError", "DownloadConnectionRefusedError", "DownloadTimeoutError",
            "DownloadFailedError", "ResponseDataLossError")),
        twisted_errors.DNSLookupError, twisted_errors.ConnectError, twisted_errors.TimeoutError,
        twisted_errors.ConnectionLost,
    ) if isinstance(cls, type))

ROBOTS_LOGGER = "scrapy.downloadermiddlewares.robotstxt"


class _WithoutTraceback(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and isinstance(record.exc_info[1], _DOWNLOAD_FAILURES):
            record.exc_info, record.exc_text = None, None
        return True


def quiet_robots_download_errors() -> None:
    """Leave the traceback out of the robots.txt middleware's line for a network failure (once
    per process)."""
    log = logging.getLogger(ROBOTS_LOGGER)
    if not any(isinstance(f, _WithoutTraceback) for f in log.filters):
        log.addFilter(_WithoutTraceback())
