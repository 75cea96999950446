"""Turning a response into an Observation: the helpers every changewatch spider uses."""

from __future__ import annotations

import re
from typing import Any

from parsel import Selector
from scrapy import exceptions as scrapy_exceptions
from scrapy.exceptions import IgnoreRequest
from scrapy.http import Response, TextResponse
from scrapy.spidermiddlewares.httperror import HttpError
from twisted.internet.error import ConnectionRefusedError, DNSLookupError, TCPTimedOutError, TimeoutError
from twisted.python.failure import Failure

from .extract import find_nodes, jsonld, resolve_path, select, select_value
from .guard import RefusedRequest
from .items import Observation
from .watchlist import Watch

__all__ = ["binary_body", "describe_failure", "observe_watch", "undecodable"]

_BINARY_MAGIC = (
    b"%PDF", b"\x89PNG", b"GIF8", b"\xff\xd8\xff", b"PK\x03\x04", b"\x1f\x8b", b"RIFF", b"\x00\x00\x01\x00"
)
_BLOCKING_STATUSES = {401, 403, 407, 429, 451, 503}


def binary_body(body: bytes) -> str | None:
    """What kind of binary *body* is (None: it looks like text)."""
    head = body[:1024]
    for magic in _BINARY_MAGIC:
        if head.startswith(magic):
            return {b"%PDF": "PDF", b"\x89PNG": "PNG image", b"GIF8": "GIF image", b"\xff\xd8\xff": "JPEG image",
                    b"PK\x03\x04": "ZIP archive", b"\x1f\x8b": "gzip data"}.get(magic, "binary data")
    if head.count(b"\x00") > len(head) // 8 and not head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "binary data (NUL bytes)"
    return None


def undecodable(response: TextResponse) -> str | None:
    """Why *response*'s text is garbage, when much of it did not decode (wrong or lying charset):
    comparing it would report a change that is only an encoding accident."""
    text = response.text
    bad = text.count("\ufffd")
    if bad <= 16 or bad * 10 <= len(text):
        return None
    return f"unsupported: undecodable text ({bad} of {len(text)} characters are not valid {response.encoding})"


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


def describe_failure(failure: Failure) -> str:
    """A short, stable description of why a request failed: ``<class>: <detail>``."""
    exc = failure.value
    if isinstance(exc, RefusedRequest):
        return f"refused: {exc}"
    if (special := _size_or_redirect(failure)) is not None:
        return special
    if isinstance(exc, HttpError):
        response = exc.response
        reason = response.status
        prefix = "blocked" if response.status in _BLOCKING_STATUSES else "http"
        retry = response.headers.get(b"Retry-After")
        extra = f" (Retry-After: {retry.decode('latin-1')})" if retry else ""
        return f"{prefix}: HTTP {reason}{extra}"
    for classes, prefix in _FAILURE_CLASSES:
        if isinstance(exc, classes):
            return f"{prefix}: {exc}"
    return f"fetch: {type(exc).__name__}: {exc}"


def _jsonld_fields(watch: Watch, sel: Selector) -> tuple[dict[str, Any], str | None, int]:
    assert watch.jsonld is not None
    data = jsonld(sel)
    types = watch.jsonld.types
    nodes = find_nodes(data.items, types) if types else [i for i in data.items if isinstance(i, dict)]
    if not nodes:
        what = f"of type {'/'.join(types)} " if types else ""
        return {}, (f"extraction: no JSON-LD node {what}found ({len(data.items)} valid items, "
                    f"{data.invalid_blocks} invalid blocks)"), data.invalid_blocks
    node = nodes[0]
    fields = {path: resolve_path(node, path) for path in watch.jsonld.fields}
    missing = [p for p, v in fields.items() if v is None]
    error = f"extraction: JSON-LD path {', '.join(missing)} matched nothing" if missing else None
    return fields, error, data.invalid_blocks


def _unreadable(response: Response) -> str | None:
    """Why *response* is not a page to read: binary, not text, or text that did not decode."""
    kind = binary_body(response.body)
    if kind is not None or not isinstance(response, TextResponse):
        ctype = (response.headers.get(b"Content-Type") or b"").decode("latin-1")
        return f"unsupported: {kind or 'non-text response'} (Content-Type: {ctype or 'none'})"
    return undecodable(response)


def observe_watch(watch: Watch, response: Response) -> tuple[Observation, int]:
    """The observation of *watch* in *response*, and the number of invalid JSON-LD blocks."""
    obs = Observation(key=watch.key, url=response.url, region=watch.region, options=watch.options())
    if (unreadable := _unreadable(response)) is not None:
        obs.error = unreadable
        return obs, 0
    assert isinstance(response, TextResponse)
    invalid = 0
    errors: list[str] = []
    if watch.compares_text:
        obs.html = response.text
        return obs, 0
    # type="html": parsel would read a body that parses as JSON as a JSON document, which CSS cannot query
    sel = Selector(text=response.text, base_url=response.url, type="html") if response.text.strip() else None
    if sel is None:
        obs.error = "empty: the response body is empty"
        return obs, 0
    fields: dict[str, Any] = {}
    if watch.jsonld is not None:
        found, error, invalid = _jsonld_fields(watch, sel)
        fields.update(found)
        errors.extend([error] if error else [])
    for name, query in watch.fields.items():
        value = select_value(sel, query)
        fields[name] = value
        if value is None:
            errors.append(f"extraction: field {name!r} ({query}) matched nothing")
    if watch.jsonld is not None or watch.fields:
        obs.fields = fields
    if watch.entities is not None:
        spec = watch.entities
        nodes = select(sel, spec.selector)
        obs.entities = [{"key": select_value(node, spec.key),
                         "fields": {n: select_value(node, q) for n, q in spec.fields.items()}} for node in nodes]
        if not nodes:
            errors.append(f"extraction: entities selector {spec.selector!r} matched nothing")
    if errors:
        obs.error = "; ".join(errors)
    return obs, invalid
