"""Every failure a download can produce is an error text in words: its class, then what
happened; never an exception's repr (the real crawl of each: tests/e2e/test_failure_messages.py)."""

from __future__ import annotations

import pytest
from OpenSSL import SSL
from scrapy import exceptions as scrapy_exceptions
from scrapy.core.downloader.handlers.http11 import TunnelError
from scrapy.exceptions import IgnoreRequest
from scrapy.http import HtmlResponse, Request
from scrapy.spidermiddlewares.httperror import HttpError
from twisted.internet.error import (
    ConnectError,
    ConnectionDone,
    ConnectionLost,
    ConnectionRefusedError,
    DNSLookupError,
    NoRouteError,
    TCPTimedOutError,
    TimeoutError,
)
from twisted.python.failure import Failure
from twisted.web._newclient import ParseError, RequestNotSent
from twisted.web.client import RequestTransmissionFailed, ResponseFailed, ResponseNeverReceived
from twisted.web.http import _DataLoss
from twisted.web.iweb import UNKNOWN_LENGTH

from changewatch.core.addresses import Refusal
from changewatch.core.failures import ClassifiedFailure
from changewatch.extract.observe import describe_failure, plain_words
from changewatch.guard import RefusedRequest

URL = "http://shop.example:8080/item/1"


def wrapped(outer: type[Exception], inner: BaseException) -> Exception:
    """*inner* as Scrapy 2.19's wrap_twisted_exceptions raises it: its text, and as the cause."""
    exc = outer(str(inner))
    exc.__cause__ = inner
    return exc


class _TxResponse:
    """What Twisted's ResponseFailed carries of the answer: its announced length."""

    def __init__(self, length: int | str):
        self.length = length


def data_loss(length: int | str) -> Exception:
    cause = ResponseFailed([Failure(ConnectionDone()), Failure(_DataLoss())], _TxResponse(length))
    exc = scrapy_exceptions.ResponseDataLossError()
    exc.__cause__ = cause
    return exc


def http_error(status: int, **headers: str) -> HttpError:
    response = HtmlResponse(URL, status=status, headers=headers, body=b"<p>no</p>", request=Request(URL))
    return HttpError(response, "Ignoring non-200 response")


def describe(exc: BaseException, *, meta: dict[str, object] | None = None, received: int | None = None,
             maxsize: int | None = 10_000_000) -> str:
    failure = Failure(exc)
    failure.request = Request(URL, meta=meta or {})  # type: ignore[attr-defined]  # as Scrapy's errback gets it
    return describe_failure(failure, received=received, maxsize=maxsize)


# (exception, what describe() is given besides, the expected text)
KNOWN: list[tuple[str, BaseException, dict[str, object], str]] = [
    ("dns", wrapped(scrapy_exceptions.CannotResolveHostError, DNSLookupError("no results for hostname lookup")), {},
     "dns: the host name shop.example does not resolve"),
    ("dns-twisted", DNSLookupError("no results"), {}, "dns: the host name shop.example does not resolve"),
    ("refused", wrapped(scrapy_exceptions.DownloadConnectionRefusedError,
                        ConnectionRefusedError("Connection refused")), {},
     "connection: shop.example:8080 refused the connection (nothing listens there?)"),
    ("no-route", NoRouteError(string="113: No route to host"), {},
     "connection: could not connect to shop.example:8080 (No route to host: 113: No route to host.)"),
    ("connect", ConnectError(string="boom"), {},
     "connection: could not connect to shop.example:8080 (An error occurred while connecting: boom.)"),
    ("timeout", scrapy_exceptions.DownloadTimeoutError(f"Getting {URL} took longer than 30.0 seconds."),
     {"meta": {"download_timeout": 30.0}},
     "timeout: no complete answer from shop.example:8080 within 30 s (DOWNLOAD_TIMEOUT)"),
    ("timeout-from-text", scrapy_exceptions.DownloadTimeoutError(f"Getting {URL} took longer than 7.5 seconds."), {},
     "timeout: no complete answer from shop.example:8080 within 7.5 s (DOWNLOAD_TIMEOUT)"),
    ("connect-timeout", wrapped(scrapy_exceptions.DownloadTimeoutError, TimeoutError("User timeout")),
     {"meta": {"download_timeout": 20}},
     "timeout: could not connect to shop.example:8080 within 20 s (DOWNLOAD_TIMEOUT)"),
    ("tcp-timeout", TCPTimedOutError(), {"meta": {"download_timeout": 20}},
     "timeout: could not connect to shop.example:8080 within 20 s (DOWNLOAD_TIMEOUT)"),
    ("tls", wrapped(scrapy_exceptions.DownloadFailedError,
                    ResponseNeverReceived([Failure(SSL.Error([("SSL routines", "", "wrong version number")]))])), {},
     "tls: the TLS handshake with shop.example:8080 failed (wrong version number)"),
    ("closed-without-answer", wrapped(scrapy_exceptions.DownloadFailedError,
                                      ResponseNeverReceived([Failure(ConnectionDone())])), {},
     "fetch: the server closed the connection without answering"),
    ("lost-before-answer", wrapped(scrapy_exceptions.DownloadFailedError,
                                   ResponseNeverReceived([Failure(ConnectionLost())])), {},
     "fetch: the connection was lost before the server answered"),
    ("closed-in-headers", wrapped(scrapy_exceptions.DownloadFailedError, ResponseFailed([Failure(ConnectionDone())])),
     {}, "fetch: the connection closed in the middle of the server's answer (before its headers ended)"),
    ("not-http", wrapped(scrapy_exceptions.DownloadFailedError,
                         ResponseFailed([Failure(ParseError("wrong number of parts", b"NOT HTTP"))])), {},
     "fetch: the server's answer could not be read as HTTP (wrong number of parts)"),
    ("truncated", data_loss(5000), {"received": 100}, "truncated: 100 of 5000 bytes arrived, then the server "
                                                       "closed the connection"),
    ("truncated-unknown-count", data_loss(5000), {}, "truncated: fewer than the 5000 bytes announced arrived, then "
                                                     "the server closed the connection"),
    ("truncated-chunked-unknown-count", data_loss(UNKNOWN_LENGTH), {},
     "truncated: part of the body arrived, then the server closed the connection before the end of the body (its "
     "size was not announced)"),
    ("truncated-chunked", data_loss(UNKNOWN_LENGTH), {"received": 100},
     "truncated: 100 bytes arrived, then the server closed the connection before the end of the body (its size "
     "was not announced)"),
    ("too-large-announced", scrapy_exceptions.DownloadCancelledError(
        f"Expected to receive 2000000 bytes which is larger than download max size (1000000) in request <GET {URL}>."),
     {}, "too large: the response announces 2000000 bytes, over the 1000000-byte limit (DOWNLOAD_MAXSIZE)"),
    ("too-large-grown", scrapy_exceptions.DownloadCancelledError(""), {"received": 1_000_100, "maxsize": 1_000_000},
     "too large: the body grew past the 1000000-byte limit (1000100 bytes arrived; DOWNLOAD_MAXSIZE)"),
    ("too-large-meta", scrapy_exceptions.DownloadCancelledError(""),
     {"received": 60_000, "meta": {"download_maxsize": 50_000}},
     "too large: the body grew past the 50000-byte limit (60000 bytes arrived; DOWNLOAD_MAXSIZE)"),
    ("cancelled", scrapy_exceptions.DownloadCancelledError(""), {"received": 10},
     "fetch: the download was cancelled after 10 bytes (under the 10000000-byte limit)"),
    ("bomb", IgnoreRequest("Cancelled download of <GET x> (1000 B compressed, 20000000 B decompressed so far) "
                           "exceeded DOWNLOAD_MAXSIZE (10000000 B)"), {},
     "too large: 1000 compressed bytes unpack to more than the 10000000-byte limit (DOWNLOAD_MAXSIZE; a "
     "compression bomb?)"),
    ("redirect-loop", IgnoreRequest("max redirections reached"), {"meta": {"redirect_times": 20}},
     "redirect: more than 20 redirections (REDIRECT_MAX_TIMES)"),
    ("robots", IgnoreRequest("Forbidden by robots.txt"), {},
     "robots: the site's robots.txt disallows this URL (ROBOTSTXT_OBEY)"),
    ("ignored", IgnoreRequest(), {}, "ignored: a downloader middleware dropped the request (no reason given)"),
    ("unsupported", scrapy_exceptions.UnsupportedURLSchemeError("Unsupported URL scheme 'gopher': no handler"), {},
     "unsupported: Scrapy has no download handler for this URL's scheme (Unsupported URL scheme 'gopher': "
     "no handler)"),
    ("404", http_error(404), {}, "http: HTTP 404: the server has no page at this URL (Not Found)"),
    ("410", http_error(410), {}, "http: HTTP 410: the server says the page was removed for good (Gone)"),
    ("418", http_error(418), {}, "http: HTTP 418: the server refused the request (I'm a Teapot)"),
    ("500", http_error(500), {}, "http: HTTP 500: the server failed to answer (Internal Server Error)"),
    ("599", http_error(599), {}, "http: HTTP 599: the server failed to answer (a status HTTP does not define)"),
    ("403", http_error(403), {}, "blocked: HTTP 403: the server refuses to serve the page (Forbidden)"),
    ("429", http_error(429, **{"Retry-After": "120"}), {},
     "blocked: HTTP 429: the server says too many requests were made (Too Many Requests); it asks to try again "
     "after 120 s"),
    ("503", http_error(503), {}, "blocked: HTTP 503: the server is unavailable or refuses for now (Service "
                                 "Unavailable)"),
    ("guard", RefusedRequest(Refusal("loopback", "127.0.0.1")), {}, "refused: loopback: 127.0.0.1"),
    ("render", ClassifiedFailure("render: the browser crashed"), {}, "render: the browser crashed"),
    ("unknown", ValueError("<object at 0x1> broke"), {}, "fetch: the download failed (ValueError: broke)"),
    ("failed-other", wrapped(scrapy_exceptions.DownloadFailedError, RuntimeError("odd")), {},
     "fetch: the download failed (odd)"),
    ("not-sent", RequestTransmissionFailed([Failure(ConnectionLost())]), {},
     "fetch: the request could not be sent (the connection closed)"),
    ("not-sent-closing", RequestNotSent(), {}, "fetch: the request was not sent: the connection was already closing"),
    ("tunnel", TunnelError("Could not open CONNECT tunnel with proxy proxy.example:8080 [{'status': 407, "
                           "'reason': b'Proxy Authentication Required'}]"), {"meta": {"proxy": "http://proxy.example:8080"}},
     "proxy: the proxy proxy.example:8080 refused to open a tunnel: HTTP 407 Proxy Authentication Required"),
    ("tunnel-garbage", TunnelError("Could not open CONNECT tunnel with proxy proxy.example:8080 [b'junk']"), {},
     "proxy: the proxy proxy.example:8080 answered the request for a tunnel with something that is not HTTP"),
]


@pytest.mark.parametrize(("exc", "extra", "expected"), [k[1:] for k in KNOWN], ids=[k[0] for k in KNOWN])
def test_every_known_failure_is_said_in_words(exc: BaseException, extra: dict[str, object], expected: str) -> None:
    text = describe(exc, **extra)  # type: ignore[arg-type]
    assert text == expected
    assert not any(s in text for s in ("<", "Failure", "twisted.", "[")), text
    assert text.split(":", 1)[0].replace(" ", "").isalpha() and ": " in text


def test_a_repr_inside_a_text_is_said_as_its_message() -> None:
    assert plain_words(str(ResponseNeverReceived([Failure(ConnectionDone())]))) == "Connection was closed cleanly."
    assert plain_words("x" * 1000) == "x" * 300


def test_gone_keeps_the_words_after_its_count() -> None:
    from changewatch.pipelines.lifecycle import gone_error

    assert gone_error(describe(http_error(404)), 2, 2) == (
        "gone: HTTP 404 on 2 consecutive runs: the server has no page at this URL (Not Found)")


def test_the_pages_own_words_are_kept() -> None:
    """Only a module path of the packages exceptions come from is shortened: a selector or a host
    name with capitals in an error stays as written."""
    assert plain_words("no element matched 'div.Price' at www.Example.com") == (
        "no element matched 'div.Price' at www.Example.com")
    assert describe(ClassifiedFailure("timeout: no element matched wait_for 'div.Price'")) == (
        "timeout: no element matched wait_for 'div.Price'")
