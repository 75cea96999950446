"""Why a request failed, as the ``error`` of an observation: the helpers every changewatch spider uses.

An error record says what happened in words after its class (``timeout: no complete answer
within 30 s``): never an exception's repr, which is what Scrapy's and Twisted's exceptions are
made of (``[<twisted.python.failure.Failure twisted.internet.error.ConnectionDone: …>]``).
"""

from __future__ import annotations

import re
from http import HTTPStatus
from typing import Any
from weakref import WeakKeyDictionary

from OpenSSL import SSL
from scrapy import exceptions as scrapy_exceptions
from scrapy import signals
from scrapy.core.downloader.handlers.http11 import TunnelError
from scrapy.crawler import Crawler
from scrapy.exceptions import IgnoreRequest
from scrapy.http import Request, Response
from scrapy.spidermiddlewares.httperror import HttpError
from scrapy.utils.httpobj import urlparse_cached
from scrapy.utils.url import strip_url
from twisted.internet.error import (
    ConnectError,
    ConnectionDone,
    ConnectionLost,
    ConnectionRefusedError,
    DNSLookupError,
    TCPTimedOutError,
    TimeoutError,
)
from twisted.python.failure import Failure
from twisted.web._newclient import RequestNotSent  # not re-exported by twisted.web.client
from twisted.web.client import RequestTransmissionFailed, ResponseFailed, ResponseNeverReceived
from twisted.web.iweb import UNKNOWN_LENGTH

from ..core.failures import ClassifiedFailure
from ..guard import RefusedRequest

__all__ = ["ReceivedBytes", "describe_failure", "describe_status", "failed_url", "moved_from", "plain_words"]

_BLOCKING_STATUSES = {401, 403, 407, 429, 451, 503}
#: redirects that say the resource has a new URL for good (RFC 9110: 301 Moved Permanently,
#: 308 Permanent Redirect); 302, 303, 307 and a meta refresh say nothing about tomorrow
PERMANENT_REDIRECTS = frozenset({301, 308})

#: what a status says, in words, when the phrase alone does not (the class of any other: below)
_STATUS_WORDS = {
    401: "the server asks for credentials", 403: "the server refuses to serve the page",
    404: "the server has no page at this URL", 407: "the proxy asks for credentials",
    410: "the server says the page was removed for good", 429: "the server says too many requests were made",
    451: "the server withholds the page for legal reasons", 503: "the server is unavailable or refuses for now",
}

# Scrapy 2.19 raises its own download exceptions, with Twisted's as their __cause__; other paths
# (a download handler of a plugin, a middleware) raise Twisted's.
_TIMEOUTS = (TimeoutError, TCPTimedOutError, *(c for c in (getattr(scrapy_exceptions, "DownloadTimeoutError", None),)
                                              if c is not None))
_DNS = (DNSLookupError, *(c for c in (getattr(scrapy_exceptions, "CannotResolveHostError", None),) if c is not None))
_REFUSED = (ConnectionRefusedError,
            *(c for c in (getattr(scrapy_exceptions, "DownloadConnectionRefusedError", None),) if c is not None))
_DATA_LOSS = tuple(c for c in (getattr(scrapy_exceptions, "ResponseDataLossError", None),) if c is not None)
_UNSUPPORTED = tuple(c for c in (getattr(scrapy_exceptions, "UnsupportedURLSchemeError", None),) if c is not None)
_FAILED = tuple(c for c in (getattr(scrapy_exceptions, "DownloadFailedError", None),) if c is not None)
_CANCELLED = tuple(c for c in (getattr(scrapy_exceptions, "DownloadCancelledError", None),) if c is not None)
_EXPECTED_SIZE = re.compile(r"(\d+) bytes which is larger than download max size \((\d+)\)")
_DECOMPRESSED_SIZE = re.compile(
    r"\((\d+) B compressed, (\d+) B decompressed so far\) exceeded DOWNLOAD_MAXSIZE \((\d+) B\)")
_SECONDS = re.compile(r"took longer than ([\d.]+) seconds")
_TUNNEL = re.compile(r"with proxy (\S+) \[(?:\{'status': (\d+), 'reason': b?['\"](.*?)['\"]\})?")
_FAILURE_REPR = re.compile(r"\[?<twisted\.python\.failure\.Failure [\w.]+: (.*?)>\]?", re.S)
_REPR = re.compile(r"<[^<>]*>")
#: a class named by its module path, in the packages a download's exceptions come from
_DOTTED_CLASS = re.compile(r"\b(?:twisted|scrapy|OpenSSL|builtins)\.(?:\w+\.)*([A-Z]\w*)")


class ReceivedBytes:
    """How many body bytes each request's download has received so far (Scrapy's
    ``headers_received`` and ``bytes_received`` signals): the error of an answer cut short
    says how many of how many arrived. Requests are held weakly: nothing outlives its request."""

    def __init__(self) -> None:
        self._counts: WeakKeyDictionary[Request, int] = WeakKeyDictionary()

    @classmethod
    def of_crawler(cls, crawler: Crawler) -> ReceivedBytes:
        counter = cls()
        crawler.signals.connect(counter._headers, signal=signals.headers_received)
        crawler.signals.connect(counter._bytes, signal=signals.bytes_received)
        return counter

    def _headers(self, request: Request, **_: Any) -> None:
        self._counts[request] = 0

    def _bytes(self, data: bytes, request: Request, **_: Any) -> None:
        self._counts[request] = self._counts.get(request, 0) + len(data)

    def received(self, request: Request) -> int | None:
        """The body bytes *request*'s download received; None when no answer's headers arrived."""
        return self._counts.get(request)


def plain_words(text: str) -> str:
    """*text* without the reprs exceptions are made of: a Twisted failure's repr becomes its
    message, any other ``<…>`` goes, a dotted class path becomes the class's name.

    >>> plain_words("[<twisted.python.failure.Failure twisted.internet.error.ConnectionDone: "
    ...             "Connection was closed cleanly.>]")
    'Connection was closed cleanly.'
    >>> plain_words("bad <object object at 0x7f> in twisted.web._newclient.ParseError")
    'bad in ParseError'
    """
    text = _FAILURE_REPR.sub(r"\1", text)
    text = _DOTTED_CLASS.sub(r"\1", _REPR.sub("", text))
    return " ".join(text.split())[:300]


def _host(request: Request | None) -> str:
    """Where the failed connection went: the proxy when there is one, else the URL's host:port."""
    if request is None:
        return "the server"
    if proxy := request.meta.get("proxy"):
        return f"the proxy {strip_url(str(proxy), strip_credentials=True)}"
    parts = urlparse_cached(request)
    port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    return f"{parts.hostname}:{port}" if port else str(parts.hostname)


def _size(exc: BaseException, request: Request | None, received: int | None, maxsize: int | None) -> str | None:
    """Size limits, redirect loops and answers cut short: Scrapy reports them as a cancelled
    download, an ignored request or a data loss; the error record says what happened."""
    text = str(exc)
    limit = request.meta.get("download_maxsize", maxsize) if request is not None else maxsize
    if isinstance(exc, _CANCELLED):  # Scrapy 2.19 cancels a download for its size (a timeout is a timeout)
        if m := _EXPECTED_SIZE.search(text):
            return f"too large: the response announces {m[1]} bytes, over the {m[2]}-byte limit (DOWNLOAD_MAXSIZE)"
        if received is not None and limit and received > limit:
            return f"too large: the body grew past the {limit}-byte limit ({received} bytes arrived; DOWNLOAD_MAXSIZE)"
        if received is not None and limit:
            return f"fetch: the download was cancelled after {received} bytes (under the {limit}-byte limit)"
        return "too large: the body grew past the download size limit (DOWNLOAD_MAXSIZE)"
    if isinstance(exc, IgnoreRequest) and (m := _DECOMPRESSED_SIZE.search(text)):
        return (f"too large: {m[1]} compressed bytes unpack to more than the {m[3]}-byte limit "
                f"(DOWNLOAD_MAXSIZE; a compression bomb?)")
    if isinstance(exc, _DATA_LOSS):
        cause = exc.__cause__
        response = getattr(cause, "response", None)
        expected = getattr(response, "length", UNKNOWN_LENGTH)
        if isinstance(expected, int):
            got = (f"{received} of {expected} bytes" if received is not None
                   else f"fewer than the {expected} bytes announced")
            return f"truncated: {got} arrived, then the server closed the connection"
        got = f"{received} bytes" if received is not None else "part of the body"
        return (f"truncated: {got} arrived, then the server closed the connection before the end of the body "
                "(its size was not announced)")
    return None


def _connection(exc: BaseException, request: Request | None) -> str | None:
    """A connection that failed or ended before a whole answer: Scrapy's DownloadFailedError
    (or any other) caused by Twisted's ResponseFailed (or a request that could not be sent),
    whose reasons say why."""
    cause: BaseException | None = exc
    while cause is not None and not isinstance(cause, (ResponseFailed, RequestTransmissionFailed, RequestNotSent)):
        cause = cause.__cause__
    if cause is None:
        return None
    if isinstance(cause, RequestNotSent):
        return "fetch: the request was not sent: the connection was already closing"
    reasons: list[BaseException] = [value for r in getattr(cause, "reasons", [])
                                     if isinstance(value := r.value if isinstance(r, Failure) else r, BaseException)]
    never = isinstance(cause, ResponseNeverReceived)
    if tls := next((r for r in reasons if isinstance(r, SSL.Error)), None):
        return f"tls: the TLS handshake with {_host(request)} failed ({_tls_words(tls)})"
    closed = any(isinstance(r, (ConnectionDone, ConnectionLost)) for r in reasons)
    if isinstance(cause, RequestTransmissionFailed):
        why = "the connection closed" if closed else "; ".join(filter(None, map(_message, reasons)))
        why = why or "no reason given"
        return f"fetch: the request could not be sent ({why})"
    if closed and never:
        cleanly = any(isinstance(r, ConnectionDone) for r in reasons)
        return ("fetch: the server closed the connection without answering" if cleanly
                else "fetch: the connection was lost before the server answered")
    if closed:
        return "fetch: the connection closed in the middle of the server's answer (before its headers ended)"
    detail = "; ".join(filter(None, map(_message, reasons))) or "no reason given"
    return f"fetch: the server's answer could not be read as HTTP ({detail})"


def _message(exc: BaseException) -> str:
    """An exception's message: its first argument when that is text (Twisted's ParseError
    carries the offending bytes as a second one), else its text in plain words."""
    first = exc.args[0] if exc.args else None
    return plain_words(first if isinstance(first, str) else str(exc))


def _tls_words(error: SSL.Error) -> str:
    """OpenSSL's reasons (``wrong version number``) of a TLS failure."""
    found = error.args[0] if error.args else None
    if isinstance(found, list):
        words = [str(item[-1]) for item in found if isinstance(item, tuple) and item and item[-1]]
        if words:
            return ", ".join(words)
    return plain_words(str(error)) or "no reason given"


def _status(response: Response, prefix: str) -> str:
    status = response.status
    if status == 304:
        # changewatch turns a 304 to its own validators into "unchanged" before this point
        return "http: HTTP 304: the server answered Not Modified to a request without validators"
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = "a status HTTP does not define"
    words = _STATUS_WORDS.get(status) or ("the server failed to answer" if status >= 500
                                          else "the server refused the request" if status >= 400
                                          else "an answer that is not a page")
    retry = response.headers.get(b"Retry-After")
    wait = plain_words(retry.decode("latin-1")) if retry else ""
    extra = f"; it asks to try again after {wait}{' s' if wait.isdigit() else ''}" if wait else ""
    return f"{prefix}: HTTP {status}: {words} ({phrase}){extra}"


def _timeout(exc: BaseException, request: Request | None) -> str:
    limit = request.meta.get("download_timeout") if request is not None else None
    if limit is None and (m := _SECONDS.search(str(exc))):
        limit = m[1]
    within = f"within {float(limit):g} s" if limit is not None else "within the time limit"
    if isinstance(exc, (TimeoutError, TCPTimedOutError)) or isinstance(exc.__cause__, (TimeoutError, TCPTimedOutError)):
        return f"timeout: could not connect to {_host(request)} {within} (DOWNLOAD_TIMEOUT)"
    return f"timeout: no complete answer from {_host(request)} {within} (DOWNLOAD_TIMEOUT)"


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


def describe_failure(failure: Failure, *, received: int | None = None, maxsize: int | None = None) -> str:
    """Why a request failed, in words: ``<class>: <what happened>``. *received*: the body bytes
    that arrived (:class:`ReceivedBytes`); *maxsize*: the crawl's DOWNLOAD_MAXSIZE."""
    exc = failure.value
    if exc is None:
        return "fetch: the download failed (no reason given)"
    request: Request | None = getattr(failure, "request", None)
    if isinstance(exc, RefusedRequest):
        return f"refused: {exc}"
    if isinstance(exc, ClassifiedFailure):  # its text starts with its class: timeout:, too large:, render:
        return str(exc)
    if (special := _size(exc, request, received, maxsize)) is not None:
        return special
    if isinstance(exc, HttpError):
        return describe_status(exc.response)
    return _download(exc, request)


def describe_status(response: Response) -> str:
    """An answer whose status is not a page's, in words: ``blocked: HTTP 403: …`` for a status that
    says the client is not let in, else ``http: HTTP 404: …``."""
    return _status(response, "blocked" if response.status in _BLOCKING_STATUSES else "http")


def _download(exc: BaseException, request: Request | None) -> str:
    if isinstance(exc, _TIMEOUTS):
        return _timeout(exc, request)
    if isinstance(exc, _DNS):
        host = urlparse_cached(request).hostname if request is not None and not request.meta.get("proxy") else None
        return f"dns: the host name {host} does not resolve" if host else "dns: the proxy's host name does not resolve"
    if isinstance(exc, _REFUSED):
        return f"connection: {_host(request)} refused the connection (nothing listens there?)"
    if isinstance(exc, ConnectError):
        return f"connection: could not connect to {_host(request)} ({plain_words(str(exc))})"
    if (words := _connection(exc, request)) is not None:
        return words
    if isinstance(exc, TunnelError):
        m = _TUNNEL.search(str(exc))
        proxy = f"the proxy {m[1]}" if m else "the proxy"
        if m and m[2]:
            return f"proxy: {proxy} refused to open a tunnel: HTTP {m[2]} {m[3]}".rstrip()
        return f"proxy: {proxy} answered the request for a tunnel with something that is not HTTP"
    if isinstance(exc, _UNSUPPORTED):
        return f"unsupported: Scrapy has no download handler for this URL's scheme ({plain_words(str(exc))})"
    if isinstance(exc, IgnoreRequest):
        text = str(exc)
        if text == "max redirections reached":
            times = request.meta.get("redirect_times", "?") if request is not None else "?"
            return f"redirect: more than {times} redirections (REDIRECT_MAX_TIMES)"
        if text == "Forbidden by robots.txt":
            return "robots: the site's robots.txt disallows this URL (ROBOTSTXT_OBEY)"
        return f"ignored: a downloader middleware dropped the request ({plain_words(text) or 'no reason given'})"
    text = plain_words(str(exc))
    if isinstance(exc, _FAILED):  # another download handler's (httpx, aiohttp): its own words
        return f"fetch: the download failed ({text or 'no reason given'})"
    return f"fetch: the download failed ({type(exc).__name__}{': ' + text if text else ''})"
