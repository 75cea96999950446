"""``ServedHeaders``: a response's header lines as served, found by the request it answered, also
after Scrapy replaced the response (decompression), never for a response of another status, and
held no longer than its request."""

from __future__ import annotations

import gc

from scrapy import Request
from scrapy.http import HtmlResponse

from changewatch.runtime.origins import ServedHeaders

SERVED = (("ETag", '"v1"'), ("Content-Length", "5"), ("x-edge", "a"), ("X-Edge", "b"))


def test_found_by_the_request_after_a_replace_and_only_for_its_status() -> None:
    served = ServedHeaders()
    request = Request("https://shop.example/p")
    served.keep(request, 200, SERVED)
    response = HtmlResponse(request.url, status=200, body=b"<p>x</p>", request=request)
    assert served.of(response) == SERVED
    assert served.of(response.replace(body=b"<p>decoded</p>")) == SERVED  # a new response, the same request
    assert served.of(response.replace(status=304)) is None  # a 304 turned into the cached 200, or the reverse
    other = HtmlResponse(request.url, status=200, body=b"", request=Request(request.url))
    assert served.of(other) is None and served.of(HtmlResponse(request.url, body=b"")) is None


def test_an_entry_lives_as_long_as_its_request() -> None:
    served = ServedHeaders()
    request = Request("https://shop.example/p")
    served.keep(request, 200, SERVED)
    del request
    gc.collect()
    assert len(served._by_request) == 0
