"""Why a request failed, as the ``error`` of an observation: the helpers every changewatch spider uses."""

from __future__ import annotations

import re

from scrapy import exceptions as scrapy_exceptions
from scrapy.exceptions import IgnoreRequest
from scrapy.http import Response
from scrapy.spidermiddlewares.httperror import HttpError
from scrapy.utils.url import strip_url
from twisted.internet.error import ConnectionRefusedError, DNSLookupError, TCPTimedOutError, TimeoutError
from twisted.python.failure import Failure

from ..core.failures import ClassifiedFailure
from ..guard import RefusedRequest

__all__ = ["describe_failure", "failed_url", "moved_from"]

_BLOCKING_STATUSES = {401, 403, 407, 429, 451, 503}
#: redirects that say the resource has a new URL for good (RFC 9110: 301 Moved Permanently,
#: 308 Permanent Redirect); 302, 303, 307 and a meta refresh say nothing about tomorrow
PERMANENT_REDIRECTS = frozenset({301, 308})

# Scrapy 2.19 raises its own download exceptions; older versions and other paths raise Twisted's.
_FAILURE_CLASSES: list[tuple[tuple[type[BaseException], ...], str]] = [
    ((TimeoutError, TCPTimedOutError), "timeout"),
    ((DNSLookupError,), "dns"),
    ((ConnectionRefusedError,), "connection"),
    ((IgnoreRequest,), "ignored"),
]
for _name, _prefix in (("DownloadTimeoutError", "timeout"), ("CannotResolveHostError", "dns"),
                       ("DownloadConnectionRefusedError", "connection"), ("ResponseDataLossError", "truncated"),
                       ("UnsupportedURLSchemeError", "unsupported")):
    if (_cls := getattr(scrapy_exceptions, _name, None)) is not None:
        _FAILURE_CLASSES.insert(0, ((_cls,), _prefix))


_CANCELLED = tuple(c for c in (getattr(scrapy_exceptions, "DownloadCancelledError", None),) if c is not None)
_EXPECTED_SIZE = re.compile(r"(\d+) bytes which is larger than download max size \((\d+)\)")
_DECOMPRESSED_SIZE = re.compile(
    r"\((\d+) B compressed, (\d+) B decompressed so far\) exceeded DOWNLOAD_MAXSIZE \((\d+) B\)")


def _size_or_redirect(failure: Failure) -> str | None:
    """Size limits and redirect loops: Scrapy reports them as a cancelled download or an ignored
    request; the error record should say what happened."""
    exc, text = failure.value, str(failure.value)
    if isinstance(exc, _CANCELLED):  # Scrapy 2.19 cancels a download only for its size (a timeout is a timeout)
        if m := _EXPECTED_SIZE.search(text):
            return f"too large: the response announces {m[1]} bytes, over the {m[2]}-byte limit (DOWNLOAD_MAXSIZE)"
        return "too large: the body grew past the download size limit (DOWNLOAD_MAXSIZE)"
    if isinstance(exc, IgnoreRequest) and (m := _DECOMPRESSED_SIZE.search(text)):
        return (f"too large: {m[1]} compressed bytes unpack to more than the {m[3]}-byte limit "
                f"(DOWNLOAD_MAXSIZE; a compression bomb?)")
    if isinstance(exc, IgnoreRequest) and text == "max redirections reached":
        request = getattr(failure, "request", None)
        times = request.meta.get("redirect_times", "?") if request is not None else "?"
        return f"redirect: gave up after {times} redirects (a redirect loop?)"
    return None


def failed_url(url: str) -> str:
    """A failed request's URL as it may appear in an error record and the store: a URL refused
    for its credentials must not carry them into the change feed."""
    return strip_url(url, strip_credentials=True, strip_default_port=False, strip_fragment=False)


def moved_from(response: Response) -> str | None:
    """Where the request for *response* started, when every redirect that led to it was
    permanent (Scrapy's RedirectMiddleware notes ``redirect_urls`` and ``redirect_reasons``); None
    without redirects, or when any hop was temporary (302, 303, 307, a meta refresh)."""
    meta = response.meta if response.request is not None else {}
    urls: list[str] = meta.get("redirect_urls") or []
    reasons: list[object] = meta.get("redirect_reasons") or []
    if not urls or len(reasons) != len(urls) or not all(r in PERMANENT_REDIRECTS for r in reasons):
        return None
    start = failed_url(urls[0])
    return start if start != failed_url(response.url) else None


def describe_failure(failure: Failure) -> str:
    """A short, stable description of why a request failed: ``<class>: <detail>``."""
    exc = failure.value
    if isinstance(exc, RefusedRequest):
        return f"refused: {exc}"
    if isinstance(exc, ClassifiedFailure):  # its text starts with its class: timeout:, too large:, render:
        return str(exc)
    if (special := _size_or_redirect(failure)) is not None:
        return special
    if isinstance(exc, HttpError):
        response = exc.response
        reason = response.status
        prefix = "blocked" if response.status in _BLOCKING_STATUSES else "http"
        if response.status == 304:
            # changewatch turns a 304 to its own validators into "unchanged" before this point
            return "http: HTTP 304 Not Modified to a request without validators"
        retry = response.headers.get(b"Retry-After")
        extra = f" (Retry-After: {retry.decode('latin-1')})" if retry else ""
        return f"{prefix}: HTTP {reason}{extra}"
    for classes, prefix in _FAILURE_CLASSES:
        if isinstance(exc, classes):
            return f"{prefix}: {exc}"
    return f"fetch: {type(exc).__name__}: {exc}"
