"""End to end: evidence keeps a page's response headers exactly as a real server sent them (names
in its case, its order, repeats as repeats, ``Content-Length`` where it was), also when the body
came gzip-compressed and Scrapy replaced the response to decode it; and a crawl with no internet
whose pages set cookies logs no traceback of the Public Suffix List (Scrapy's cookie middleware
asks tldextract for it; the crawl has it read from tldextract's bundled snapshot)."""

from __future__ import annotations

import gzip
import json
import sqlite3
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from .crawl import Crawler
from .hostile import HostileSite, good_page

BODY = good_page("served")
ZIPPED = gzip.compress(good_page("zipped"))
#: as the server sends them: ETag before Content-Length, names in odd case, a repeated header apart
SERVED = [("ETag", '"v1"'), ("Content-Length", str(len(BODY))), ("content-type", "text/html; charset=utf-8"),
          ("X-Edge", "a"), ("Set-Cookie", "sid=s3cret; Path=/"), ("cache-CONTROL", "max-age=0"), ("X-Edge", "b"),
          ("WWW-Authenticate", "Basic realm=shop")]
SERVED_ZIPPED = [("Content-Encoding", "gzip"), ("ETag", 'W/"z"'), ("Content-Type", "text/html"),
                 ("Content-Length", str(len(ZIPPED))), ("Vary", "Accept-Encoding")]


def raw(headers: list[tuple[str, str]], body: bytes) -> Callable[[BaseHTTPRequestHandler], None]:
    def respond(h: BaseHTTPRequestHandler) -> None:
        h.send_response_only(200)  # no Server or Date of its own: these are the only lines
        for name, value in headers:
            h.send_header(name, value)
        h.end_headers()
        h.wfile.write(body)
    return respond


def kept_headers(store: Path) -> dict[str, list[list[str]]]:
    db = sqlite3.connect(store)
    try:
        return {key: json.loads(headers) for key, headers in db.execute("SELECT key, headers FROM evidence")}
    finally:
        db.close()


def test_evidence_keeps_headers_exactly_as_served(site: HostileSite, tmp_path: Path) -> None:
    site.good["/served"] = raw(SERVED, BODY)
    site.good["/zipped"] = raw(SERVED_ZIPPED, ZIPPED)
    crawler = Crawler(tmp_path, [{"url": f"{site.base}/served", "key": "served"},
                                 {"url": f"{site.base}/zipped", "key": "zipped"}])
    result = crawler.run()
    assert result.returncode == 0, result.stderr[-2000:]
    kept = kept_headers(tmp_path / "state.db")
    assert kept["served"] == [[n, v] for n, v in SERVED if n != "Set-Cookie"]
    assert kept["zipped"] == [list(pair) for pair in SERVED_ZIPPED]  # Content-Encoding as served, too


def test_an_offline_crawl_logs_no_public_suffix_list_traceback(site: HostileSite, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # no cached list: tldextract would fetch it from publicsuffix.org (this machine has no internet)
    monkeypatch.setenv("TLDEXTRACT_CACHE", str(tmp_path / "tldextract-cache"))
    monkeypatch.delenv("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", raising=False)
    site.good["/cookies"] = raw([("Content-Type", "text/html"), ("Set-Cookie", "sid=1; Path=/"),
                                 ("Set-Cookie", "lang=de; Domain=127.0.0.1")], BODY)
    crawler = Crawler(tmp_path, [{"url": f"{site.base}/cookies", "key": "cookies"}])
    result = crawler.run()
    assert result.returncode == 0, result.stderr[-2000:]
    # the cookies were checked against the list: tldextract cached what it read, without fetching
    assert list((tmp_path / "tldextract-cache").rglob("publicsuffix.org-tlds/*.json")), result.stderr[-2000:]
    assert not list((tmp_path / "tldextract-cache").rglob("urls/*.json"))
    assert "Traceback" not in result.stderr, result.stderr[-4000:]
    assert "Public Suffix List" not in result.stderr and "tldextract" not in result.stderr, result.stderr[-4000:]
