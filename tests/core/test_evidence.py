"""Evidence helpers (changewatch/core/evidence.py): what is kept of a response, and how."""

from __future__ import annotations

import hashlib
import zlib

import pytest

from changewatch.core.comparisons import Kind
from changewatch.core.evidence import (
    COMPRESSION,
    decompress,
    extension,
    headers_json,
    keep_body,
    keeps_evidence,
    without_credentials,
)


def test_a_body_round_trips_and_is_named_by_its_digest() -> None:
    body = "<p>Preis: 89,00 €</p>".encode() * 500
    kept = keep_body(body)
    assert kept.digest == hashlib.sha256(body).hexdigest() and kept.size == len(body)
    assert kept.compression == COMPRESSION == "zstd" and len(kept.data) < len(body) / 10
    assert decompress(kept.compression, kept.data) == body
    assert decompress("zlib", zlib.compress(body)) == body  # the other compression the store may hold
    assert keep_body(b"").size == 0 and decompress(COMPRESSION, keep_body(b"").data) == b""


@pytest.mark.parametrize(("compression", "data", "message"), [
    ("brotli", b"x", "unknown compression 'brotli'"),
    ("zstd", b"not zstd", "does not decompress"),
    ("zlib", b"not zlib", "does not decompress"),
])
def test_a_body_that_cannot_be_read_says_why(compression: str, data: bytes, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        decompress(compression, data)


def test_cookies_and_credentials_are_never_kept_in_any_case() -> None:
    served = [("Content-Type", "text/html"), ("SET-COOKIE", "a=1"), ("set-cookie2", "b=2"), ("Cookie", "c=3"),
              ("authorization", "Bearer x"), ("Proxy-Authorization", "Basic y"), ("ETag", '"v1"'),
              ("WWW-Authenticate", "Basic realm=shop")]
    assert headers_json(served) == ('[["Content-Type","text/html"],["ETag","\\"v1\\""],'
                                    '["WWW-Authenticate","Basic realm=shop"]]')
    assert without_credentials("http://user:pass@[::1]:8080/x") == "http://[::1]:8080/x"
    assert without_credentials("https://shop.example/a@b") == "https://shop.example/a@b"  # an @ in the path


def test_which_versions_are_kept() -> None:
    assert keeps_evidence(Kind.BASELINE, {}) and keeps_evidence(Kind.CONTENT, {}) and keeps_evidence(Kind.FIELD, {})
    assert keeps_evidence(Kind.NONE, {"fields/rebaselined": 1})  # an edited watch starts afresh from it
    for kind in (Kind.NONE, Kind.NOISE, Kind.ERROR, Kind.MOVED, Kind.RECOVERED):
        assert not keeps_evidence(kind, {"content/digested": 1})


@pytest.mark.parametrize(("content_type", "ext"), [
    ("text/html; charset=utf-8", ".html"), ("application/xhtml+xml", ".html"), ("application/json", ".json"),
    ("application/rss+xml", ".xml"), ("text/xml", ".xml"), ("application/pdf", ".pdf"), ("text/plain", ".txt"),
    ("text/csv", ".csv"), ("text/markdown", ".txt"), ("image/png", ".bin"), ("", ".bin"), (None, ".bin"),
])
def test_file_names_follow_the_content_type(content_type: str | None, ext: str) -> None:
    assert extension(content_type) == ext
