"""End to end: a real crawl of a server that misbehaves in every way a download can fail; each
error record says what happened in words after its class, and never an exception's repr."""

from __future__ import annotations

import re
import socket
import struct
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from .crawl import Crawler, by_key
from .hostile import HostileSite, endless, good_page, hang, page, redirect, send

pytestmark = pytest.mark.slow


def silent(h: BaseHTTPRequestHandler) -> None:
    """Reads the request and closes the connection without a byte of answer."""
    h.close_connection = True


def reset(h: BaseHTTPRequestHandler) -> None:
    """Drops the connection with a reset (SO_LINGER 0) instead of closing it."""
    h.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    h.connection.close()
    h.close_connection = True


def raw(data: bytes) -> object:
    """Writes *data* as the whole answer, then closes the connection."""
    def handler(h: BaseHTTPRequestHandler) -> None:
        h.wfile.write(data)
        h.wfile.flush()
        h.close_connection = True
    return handler


def short_body(h: BaseHTTPRequestHandler) -> None:
    """Announces 5000 bytes and sends 100."""
    send(h, 200, b"x" * 100, length=5000)


BIG = good_page("big", paragraphs=30_000)  # ~2 MB, over the 1 MB limit the crawl sets

CASES: dict[str, str] = {
    "silent": r"fetch: the server closed the connection without answering",
    "reset": r"fetch: the (connection was lost before the server answered|server closed the connection without "
             r"answering)",
    "half-headers": r"fetch: the connection closed in the middle of the server's answer \(before its headers ended\)",
    "garbage": r"fetch: the server's answer could not be read as HTTP \(.+\)",
    "short": r"truncated: 100 of 5000 bytes arrived, then the server closed the connection",
    "short-chunked": r"truncated: 100 bytes arrived, then the server closed the connection before the end of the body "
                     r"\(its size was not announced\)",
    "hang": r"timeout: no complete answer from 127\.0\.0\.1:\d+ within 5 s \(DOWNLOAD_TIMEOUT\)",
    "big": rf"too large: the response announces {len(BIG)} bytes, over the 1000000-byte limit \(DOWNLOAD_MAXSIZE\)",
    "endless": r"too large: the body grew past the 1000000-byte limit \(\d+ bytes arrived; DOWNLOAD_MAXSIZE\)",
    "missing": r"http: HTTP 404: the server has no page at this URL \(Not Found\)",
    "broken": r"http: HTTP 500: the server failed to answer \(Internal Server Error\)",
    "forbidden": r"blocked: HTTP 403: the server refuses to serve the page \(Forbidden\)",
    "busy": r"blocked: HTTP 429: the server says too many requests were made \(Too Many Requests\); it asks to try "
            r"again after 120 s",
    "captcha": r"blocked: page says .+",
    "private": r"robots: the site's robots\.txt disallows this URL \(ROBOTSTXT_OBEY\)",
    "tls": r"tls: the TLS handshake with 127\.0\.0\.1:\d+ failed \(.+\)",
    "refused": r"connection: 127\.0\.0\.1:\d+ refused the connection \(nothing listens there\?\)",
    "loop": r"redirect: more than 20 redirections \(REDIRECT_MAX_TIMES\)",
}


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_every_failure_is_said_in_words(tmp_path: Path) -> None:
    site = HostileSite()
    try:
        good = site.good
        good["/silent"], good["/reset"], good["/short"] = silent, reset, short_body
        good["/half-headers"] = raw(b"HTTP/1.1 200 OK\r\nContent-Ty")
        good["/garbage"] = raw(b"SOMETHING ELSE ENTIRELY\r\n\r\n")
        good["/short-chunked"] = raw(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n"
                                     b"64\r\n" + b"x" * 100 + b"\r\n")
        good["/hang"], good["/big"], good["/endless"] = hang(site), page(BIG), endless
        good["/broken"] = page(b"<h1>oops</h1>", 500)
        good["/loop"] = redirect("/loop")  # a watch's request is never filtered as a duplicate
        good["/forbidden"] = page(b"<h1>no</h1>", 403)
        good["/busy"] = page(b"<h1>later</h1>", 429, Retry_After="120")
        good["/captcha"] = page(b"<html><body><p>Please verify you are a human to continue.</p></body></html>")
        good["/robots.txt"] = page(b"User-agent: *\nDisallow: /private\n", ctype="text/plain")
        good["/private"] = page(good_page("private"))
        urls = {key: f"{site.base}/{key}" for key in CASES}
        urls["tls"] = site.base.replace("http://", "https://") + "/tls"
        urls["refused"] = f"http://127.0.0.1:{closed_port()}/"
        crawler = Crawler(tmp_path, [{"url": url, "key": key} for key, url in urls.items()])
        result = crawler.run("-s", "RETRY_ENABLED=False", "-s", "DOWNLOAD_TIMEOUT=5",
                             "-s", "DOWNLOAD_MAXSIZE=1000000", "-s", "DOWNLOAD_WARNSIZE=0")
    finally:
        site.stop()
    records = by_key(result.records)
    assert records.keys() == CASES.keys(), (sorted(records), result.stderr[-3000:])
    assert site.hits["/private"] == 0, site.events  # on the host of every other case, robots.txt is obeyed
    # every watch ended in an error record, the redirect loop's among them: not one page was observed
    assert result.returncode == 1, result.stderr[-3000:]
    assert f"not one page was observed: all {len(CASES)} due watch(es) ended in an error" in result.stderr
    for key, expected in CASES.items():
        error = records[key]["error"]
        assert records[key]["kind"] == "error"
        assert re.fullmatch(expected, error), (key, error)
        assert not any(s in error for s in ("<", "Failure", "twisted.")), (key, error)
