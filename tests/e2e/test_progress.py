"""End to end: the progress line on a long run, beside Scrapy's own LogStats line."""

from __future__ import annotations

import re
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path

from .crawl import Crawler
from .hostile import HostileSite, good_page, page, send


def slow(seconds: float, body: bytes) -> object:
    def handler(h: BaseHTTPRequestHandler) -> None:
        time.sleep(seconds)
        send(h, 200, body)
    return handler


def test_a_long_run_says_how_far_it_is(site: HostileSite, tmp_path: Path) -> None:
    site.good["/quick"] = page(good_page("quick"))
    site.good["/gone"] = page(b"<h1>Not found</h1>", 404)
    site.good["/slow"] = slow(3.5, good_page("slow"))  # type: ignore[assignment]
    watches = [{"url": f"{site.base}/quick", "key": "quick"}, {"url": f"{site.base}/gone", "key": "gone"},
               {"url": f"{site.base}/slow", "key": "slow"}]
    crawler = Crawler(tmp_path, watches)
    result = crawler.run("-s", "CHANGEWATCH_PROGRESS_INTERVAL=1", "-s", "LOGSTATS_INTERVAL=1")
    assert result.returncode == 0, result.stderr[-2000:]
    lines = re.findall(r"INFO: changewatch: progress: (.*)", result.stderr)
    assert lines, result.stderr[-3000:]
    # while the slow page is on its way: the other two are done, one of them an error
    assert "2/3 watches done (66%), 0 changes, 1 error" in lines
    assert re.search(r"INFO: Crawled \d+ pages", result.stderr)  # Scrapy's own LogStats line is still there

    quiet = crawler.run("-s", "CHANGEWATCH_PROGRESS_INTERVAL=0")
    assert quiet.returncode == 0 and "changewatch: progress:" not in quiet.stderr
