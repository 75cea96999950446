"""What a response is (an HTML page, JSON, plain text, a PDF, something else), from its headers,
its first bytes and its URL: cheap enough for the crawl's thread (nothing is decoded or parsed
here; JSON, text and PDFs are read in the worker, core/documents.py).

A new type is one more entry in the tables below and one more branch where
:func:`changewatch.extract.watch.observe_page` dispatches on it. Feeds (RSS, Atom, JSON Feed)
are told apart before these tables are asked, by :func:`changewatch.extract.feeds.is_feed`.
"""

from __future__ import annotations

import codecs
import re
from urllib.parse import urlsplit

from .selectors import binary_body

__all__ = ["BINARY", "DECLARED_TYPES", "detect_type", "media_type"]

#: the values of a watch's ``type`` option
DECLARED_TYPES = ("html", "json", "feed", "text", "pdf", "bytes")
#: what :func:`detect_type` says of a response no reader takes (images, archives, binaries)
BINARY = "binary"

_MEDIA_TYPES = {
    "text/html": "html", "application/xhtml+xml": "html",
    # XML is read as a page's text, as before content types (feeds are another type)
    "text/xml": "html", "application/xml": "html",
    "application/json": "json", "text/json": "json", "application/x-ndjson": "text",
    "application/javascript": "text", "application/x-javascript": "text", "application/ecmascript": "text",
    "text/plain": "text", "text/markdown": "text", "text/x-markdown": "text", "text/csv": "text",
    "application/pdf": "pdf", "application/x-pdf": "pdf",
}
#: say nothing of what the body is: the body and the URL decide
_GENERIC = frozenset({"", "application/octet-stream", "binary/octet-stream", "application/unknown",
                      "application/binary", "application/download", "application/force-download"})
_SUFFIXES = {".json": "json", ".txt": "text", ".md": "text", ".markdown": "text", ".csv": "text",
             ".pdf": "pdf"}
_BOMS = (codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
_HTML_START = re.compile(rb"(?:\xef\xbb\xbf)?\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html)[\s>]", re.I | re.S)


def media_type(content_type: str | bytes | None) -> str:
    """The media type of a Content-Type header value, lower case, without parameters."""
    if isinstance(content_type, bytes):
        content_type = content_type.decode("latin-1")
    return (content_type or "").split(";", 1)[0].strip().lower()


def _by_media_type(media: str) -> str | None:
    if media in _MEDIA_TYPES:
        return _MEDIA_TYPES[media]
    if media.endswith("+json"):
        return "json"
    if media.endswith("+xml"):
        return "html"
    if media.startswith("text/"):
        return "text"
    if media.startswith(("image/", "audio/", "video/", "font/", "model/")):
        return BINARY
    return None


def _sniffed(body: bytes) -> str | None:
    head = body[:1024]
    if head.startswith(b"%PDF-"):
        return "pdf"
    if binary_body(head):
        return BINARY
    for bom in _BOMS:
        if head.startswith(bom):
            head = head[len(bom):].replace(b"\x00", b"")
            break
    first = head.lstrip()[:1]
    if first in (b"{", b"["):
        return "json"
    if first == b"<":
        return "html"
    return None


def _by_suffix(url: str) -> str | None:
    path = urlsplit(url).path.lower()
    for suffix, kind in _SUFFIXES.items():
        if path.endswith(suffix):
            return kind
    return None


def detect_type(content_type: str | bytes | None, body: bytes, url: str) -> str:
    """``html``, ``json``, ``text``, ``pdf`` or :data:`BINARY`: the Content-Type header first
    (``text/plain`` gives way to a ``.json`` URL, as raw file hosts serve everything as text, and
    to a body that starts as an HTML document does), then
    the body's first bytes (a BOM, ``{``/``[``, ``%PDF-``, ``<``, binary magic), then the URL's
    suffix (``.txt``, ``.md``, ``.csv``, ``.json``, ``.pdf``); else ``html``, as before types.

    >>> detect_type("application/json; charset=utf-8", b"<html>", "https://a.example/")
    'json'
    >>> detect_type(None, b"\\xef\\xbb\\xbf[1, 2]", "https://a.example/x"), detect_type("", b"a,b", "https://a.example/x.csv")
    ('json', 'text')
    """
    media = media_type(content_type)
    if media not in _GENERIC:
        kind = _by_media_type(media)
        if media == "text/plain" and _by_suffix(url) == "json":
            return "json"
        if media == "text/plain" and _HTML_START.match(body[:256]):
            return "html"  # a misconfigured server's page: its markup is not what anyone watches
        if kind is not None:
            return kind
        # an application/* type no reader knows: what its body is decides, else it is binary
        return _sniffed(body) or _by_suffix(url) or BINARY
    return _sniffed(body) or _by_suffix(url) or "html"
