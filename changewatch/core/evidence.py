"""Evidence (docs/evidence.md): the body and headers of a page as served, kept for the versions a
change is judged between (a baseline, a change, a re-baseline), compressed, without cookies or
credentials. Pure functions: no Scrapy, no I/O.

Bodies are compressed with zstd, level 2: on the real-page corpus (232 KB a page) 0.52 ms a page
(mean) to 17.3 % of the size, where level 3 took 0.98 ms for 16.8 %, zlib 4.9 ms (level 6) for
17 %, or 2.0 ms (level 1) for 20 %. A first crawl compresses every page (all are baselines), in the worker processes."""

from __future__ import annotations

import hashlib
import json
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

import zstandard

from .comparisons import Kind

__all__ = ["COMPRESSION", "STRIPPED_HEADERS", "KeptBody", "compress", "decompress", "extension", "headers_json",
           "keep_body", "keeps_evidence", "without_credentials"]

#: response headers never kept (compared in lower case): what would let someone act as the crawl
STRIPPED_HEADERS = frozenset({"set-cookie", "set-cookie2", "cookie", "authorization", "proxy-authorization"})
#: how bodies are compressed (the ``compression`` the store keeps beside each; "zlib" is read too)
COMPRESSION = "zstd"
_LEVEL = 2


@dataclass(frozen=True, slots=True)
class KeptBody:
    """A body to keep: its SHA-256 (hex; the same body is stored once per spider), compressed."""

    digest: str
    data: bytes
    size: int
    compression: str = COMPRESSION


def keep_body(body: bytes) -> KeptBody:
    return KeptBody(hashlib.sha256(body).hexdigest(), compress(body), len(body))


def compress(body: bytes) -> bytes:
    """*body* compressed as kept bodies are (COMPRESSION): also a first page's body kept unread in
    its snapshot (core/comparisons/content_store.py), the same bytes as its evidence."""
    # a compressor of its own per call: one is not to be shared between threads (~10 µs). With
    # the frame's checksum (4 bytes, xxHash64 of the body): a damaged blob is an error when it is
    # decompressed, not a body of other bytes (a page kept unread would read as another text and
    # be reported as changed). Frames written before it have none, and are read as they are.
    return zstandard.ZstdCompressor(level=_LEVEL, write_checksum=True).compress(body)


def decompress(compression: str, data: bytes) -> bytes:
    """A kept body as served; ValueError for a compression this version does not know, or data
    that does not decompress."""
    try:
        if compression == "zstd":
            return zstandard.ZstdDecompressor().decompress(data)
        if compression == "zlib":
            return zlib.decompress(data)
    except (zstandard.ZstdError, zlib.error) as exc:
        raise ValueError(f"the kept body does not decompress: {exc}") from None
    raise ValueError(f"unknown compression {compression!r}")


def keeps_evidence(kind: Kind, counters: Mapping[str, int]) -> bool:
    """Whether an observation judged *kind* is a version a change is judged between: the first
    good one (a baseline), a change of the page, or one whose parts started afresh (an edited
    watch: the next change is judged against it). Not nothing, noise, errors or moves."""
    return kind is Kind.BASELINE or kind.changes_page or any(name.endswith("/rebaselined") for name in counters)


def headers_json(headers: Iterable[tuple[str, str]]) -> str:
    """Response headers as kept: [name, value] pairs in the order and case given (as served, where
    the download handler knows them), repeats as repeats, without cookies and credentials.

    >>> headers_json([("ETag", "W/1"), ("Set-Cookie", "sid=1"), ("vary", "A"), ("Content-Length", "3"), ("Vary", "B")])
    '[["ETag","W/1"],["vary","A"],["Content-Length","3"],["Vary","B"]]'
    """
    kept = [[name, value] for name, value in headers if name.lower() not in STRIPPED_HEADERS]
    return json.dumps(kept, ensure_ascii=False, separators=(",", ":"))


def without_credentials(url: str) -> str:
    """*url* without a user name or password (the SSRF guard refuses such URLs, but it can be off).

    >>> without_credentials("https://me:secret@shop.example:8443/p?q=1"), without_credentials("https://shop.example/")
    ('https://shop.example:8443/p?q=1', 'https://shop.example/')
    """
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


_EXTENSIONS = (("html", ".html"), ("json", ".json"), ("xml", ".xml"), ("rss", ".xml"), ("atom", ".xml"),
               ("pdf", ".pdf"), ("text/plain", ".txt"), ("text/csv", ".csv"), ("text/", ".txt"))


def extension(content_type: str | None) -> str:
    """The file name extension a body of *content_type* is written out with (``.bin`` for others).

    >>> extension("text/html; charset=utf-8"), extension("application/ld+json"), extension(None)
    ('.html', '.json', '.bin')
    """
    media = (content_type or "").split(";", 1)[0].strip().lower()
    return next((ext for marker, ext in _EXTENSIONS if marker in media), ".bin") if media else ".bin"
