"""A watch of a host that does not resolve: its ``error`` record says so (``dns: …``), the crawl
exits 1 (not one page observed), and the log says it in lines, not tracebacks: Scrapy's
robots.txt middleware logs the failed robots.txt (ROBOTSTXT_OBEY, which the add-on turns on) with
the exception's traceback, for every such host on every run. A real crawl, its names answered by
a real DNS server that knows none of them."""

from __future__ import annotations

from pathlib import Path

import pytest

from .crawl import Crawler
from .dnsserver import DNSServer

pytestmark = pytest.mark.slow


def test_a_host_that_does_not_resolve_is_an_error_without_a_traceback(nameserver: DNSServer, tmp_path: Path) -> None:
    crawler = Crawler(tmp_path, [{"url": "http://gone.example/terms", "key": "terms"}])
    run = crawler.run("-s", f"CHANGEWATCH_SSRF_NAMESERVERS={nameserver.address}", "-s", "RETRY_TIMES=0")
    assert run.returncode == 1, run.stderr[-3000:]
    assert [r["error"] for r in run.records] == ["dns: the host name gone.example does not resolve"]
    assert "[scrapy.downloadermiddlewares.robotstxt] ERROR: Error downloading <GET http://gone.example/terms>" \
        in run.stderr, run.stderr[-3000:]
    assert "Traceback" not in run.stderr, run.stderr[-3000:]
