"""Response headers exactly as served, for evidence (docs/evidence.md): names in the server's case,
in the order and with the repeats it sent them.

Scrapy's ``Headers`` re-cases every name (``ETag`` becomes ``Etag``) and its HTTP/1.1 handler puts
``Content-Length`` first (Twisted keeps it apart, as a connection header); Twisted's parser
lower-cases names before it stores them. The one place a header line is seen as sent is the
parser's ``headerReceived``: :class:`ServedHeadersParser` notes each one there, and
:class:`ServedHeadersAgent` hands the list, with the request it answered, to the crawl's
:class:`~changewatch.runtime.origins.ServedHeaders`. Scrapy swaps its own parser class in the same
way (``_LenientHTTP11ClientProtocol``); these build on Scrapy 2.19's private HTTP/1.1 classes,
which ``tests/e2e/test_served_headers.py`` checks against a real server.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from scrapy.core.downloader.handlers.http11 import (
    _LenientHTTP11ClientFactory,
    _LenientHTTP11ClientProtocol,
    _LenientHTTPClientParser,
    _ScrapyAgent,
)

if TYPE_CHECKING:
    from scrapy import Request
    from twisted.internet.defer import Deferred
    from twisted.internet.interfaces import IAddress
    from twisted.web._newclient import HTTP11ClientProtocol
    from twisted.web._newclient import Request as TxRequest
    from twisted.web.iweb import IResponse

__all__ = ["ServedHeadersAgent", "ServedHeadersFactory", "ServedHeadersParser", "ServedHeadersProtocol"]

#: the attribute of a Twisted response that holds its header lines as served
_ATTRIBUTE = "_changewatch_served_headers"

#: (request, status, header lines as served) → None
Keep = Callable[["Request", int, tuple[tuple[str, str], ...]], None]


class ServedHeadersParser(_LenientHTTPClientParser):
    """Scrapy's lenient response parser, noting every header line as it arrives. An informational
    (1xx) response's lines are dropped with it, as the parser drops the response."""

    _served: list[tuple[bytes, bytes]]

    def headerReceived(self, name: bytes, value: bytes) -> None:
        self._served.append((name, value))
        super().headerReceived(name, value)  # type: ignore[no-untyped-call]

    def allHeadersReceived(self) -> None:
        if 100 <= self.response.code < 200:
            self._served = []
        else:
            setattr(self.response, _ATTRIBUTE, tuple((n.decode("latin-1"), v.decode("latin-1"))
                                                     for n, v in self._served))
        super().allHeadersReceived()  # type: ignore[no-untyped-call]


class ServedHeadersProtocol(_LenientHTTP11ClientProtocol):
    def request(self, request: TxRequest) -> Deferred[IResponse]:
        d = super().request(request)
        # Scrapy's own way to choose the parser (see _LenientHTTP11ClientProtocol.request): the
        # parser is new for each request and has received nothing yet
        parser = self._parser
        assert parser is not None
        parser.__class__ = ServedHeadersParser
        assert isinstance(parser, ServedHeadersParser)
        parser._served = []
        return d


class ServedHeadersFactory(_LenientHTTP11ClientFactory):
    def buildProtocol(self, addr: IAddress | None) -> HTTP11ClientProtocol:
        return ServedHeadersProtocol(self._quiescentCallback)  # type: ignore[no-untyped-call]


class ServedHeadersAgent(_ScrapyAgent):
    """Scrapy's agent, handing each response's header lines as served to *keep* with its request
    (connections from a pool whose factory is :class:`ServedHeadersFactory`)."""

    def __init__(self, keep: Keep, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._keep = keep

    def _cb_bodyready(self, txresponse: Any, request: Request) -> Any:
        served = getattr(txresponse, _ATTRIBUTE, None)
        if served is not None:
            self._keep(request, int(txresponse.code), served)
        return super()._cb_bodyready(txresponse, request)
