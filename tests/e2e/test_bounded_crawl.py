"""End to end: what a long crawl holds does not grow with its watchlist. Scrapy's engine
took every start request into its scheduler at once; Twisted kept every cancelled timed call of a
download (its timeouts) for DOWNLOAD_TIMEOUT. Both measured in a real crawl of 1,500 watches of a
local keep-alive site, four requests at a time: without the start pacing the scheduler held ~all of
them, without the sweep the reactor ~two timed calls a page."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from changewatch.spiders.pacing import watermarks

from .crawl import Crawler
from .hostile import good_page

PAGES = 1500
EXTENSIONS = ('EXTENSIONS={"tests.e2e.statsdump.StatsDump": 0, "tests.e2e.statsdump.SimulatedClock": 0, '
              '"tests.e2e.plugins.Peaks": 0}')


class KeepAlive(BaseHTTPRequestHandler):
    """HTTP/1.1, connections kept: as nginx serves, and as the timed calls pile up."""

    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        body = good_page(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def keepalive_site() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), KeepAlive)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class _Settings:
    def __init__(self, concurrent: int):
        self.concurrent = concurrent

    def getint(self, name: str, default: int = 0) -> int:
        return self.concurrent


def test_a_long_watchlist_is_queued_as_the_downloader_takes_it(keepalive_site: str, tmp_path: Path) -> None:
    crawler = Crawler(tmp_path, [{"url": f"{keepalive_site}/p{i}"} for i in range(PAGES)])
    result = crawler.run("-s", "CONCURRENT_REQUESTS=4", "-s", "CONCURRENT_REQUESTS_PER_DOMAIN=4", "-s", EXTENSIONS)
    assert result.returncode == 0, result.stderr[-2000:]
    stats = result.stats
    assert stats["changewatch/commit/baseline"] == PAGES
    # Scrapy's scheduler: the paced start requests (up to the high mark: 512 here), and what else
    # is on its way
    _, high = watermarks(type("Crawl", (), {"settings": _Settings(4)})())  # type: ignore[arg-type]
    assert stats["test/scheduler_peak"] <= high + 8, stats["test/scheduler_peak"]
    # the reactor: a second's worth of cancelled timed calls, not the crawl's (two a page)
    assert stats["test/timed_calls_peak"] < PAGES / 2, stats["test/timed_calls_peak"]
