"""A plain spider of a project of one's own (``scrapy startproject``, README's two settings lines)
whose every request is refused, unreachable or answered with an error status makes no error
record (Scrapy hands a failed request without an errback to no one): its crawl used to exit 0 as
if there had been nothing to do. It exits 1 with one line saying why the requests failed; a
spider that requests nothing, or gets pages and yields nothing of them, and a crawl that observed
some of its pages, exit 0 as before. Real ``scrapy crawl`` processes against local servers."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from .crawl import read_feed
from .dnsserver import DNSServer
from .hostile import HostileSite, gzip_bomb, hang, page, send
from .test_own_project import own_env, startproject

pytestmark = pytest.mark.slow

SETTINGS = """
ADDONS = {"changewatch.Addon": 0}
SPIDER_MODULES = ["myshop.spiders", "changewatch.spiders.watch"]
CHANGEWATCH_WORKERS = 1  # a shared test machine
"""

SPIDER = '''\
import scrapy


class MineSpider(scrapy.Spider):
    name = "mine"

    def __init__(self, urls="", swallow="", **kwargs):
        super().__init__(**kwargs)
        self.start_urls = [u for u in urls.split(",") if u]
        self.swallow = bool(swallow)

    async def start(self):
        for url in self.start_urls:
            yield scrapy.Request(url, errback=self.failed if self.swallow else None)

    def failed(self, failure):
        self.logger.info("could not fetch %s", failure.request.url)

    def parse(self, response):
        price = response.css("p.price::text").get()
        if price:
            yield {"key": response.url, "url": response.url, "fields": {"price": price}, "kinds": {"price": "price"}}
'''

LINE = "ERROR: changewatch: not one page was observed: "
PRICED = b"<html><body><h1>Kettle</h1><p class='price'>89.00 EUR</p></body></html>"


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return startproject(tmp_path_factory.mktemp("startproject"))


@pytest.fixture
def project(generated: Path, tmp_path: Path) -> Path:
    copy = Path(shutil.copytree(generated, tmp_path / "myshop"))
    with (copy / "myshop" / "settings.py").open("a", encoding="utf-8") as f:
        f.write(SETTINGS)
    (copy / "myshop" / "spiders" / "mine.py").write_text(SPIDER, encoding="utf-8")
    return copy


def crawl(project: Path, urls: list[str], *extra: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """``scrapy crawl mine`` of *urls*: the process, and its "not one page was observed" lines."""
    cmd = [sys.executable, "-m", "scrapy", "crawl", "mine", "-a", f"urls={','.join(urls)}", "-O", "changes.jsonl",
           "-s", "LOG_LEVEL=INFO", *extra]
    done = subprocess.run(cmd, cwd=project, env=own_env(), capture_output=True, text=True, timeout=180)
    return done, [line.split(LINE, 1)[1] for line in done.stderr.splitlines() if LINE in line]


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_every_request_refused_by_the_ssrf_guard_exits_1_saying_so(project: Path, site: HostileSite) -> None:
    site.good["/a"] = site.good["/b"] = page(PRICED)
    for _ in (1, 2):  # every run: nothing of it is a change in the store
        done, lines = crawl(project, [f"{site.base}/a", f"{site.base}/b"])
        assert done.returncode == 1, done.stderr[-3000:]
        assert lines == ["all 2 request(s) failed, none reached the spider: refused: loopback: 127.0.0.1 "
                         "(2 requests)"], done.stderr[-3000:]
        assert "Traceback" not in done.stderr, done.stderr[-3000:]
        assert read_feed(project / "changes.jsonl") == []
    assert not site.hits


ALLOWED = ("-s", "CHANGEWATCH_ALLOW_PRIVATE=True", "-s", "RETRY_TIMES=0")


@pytest.mark.parametrize(("served", "why"), [
    ("robots", "robots: the site's robots.txt disallows this URL (ROBOTSTXT_OBEY) (2 requests)"),
    ("403", "blocked: HTTP 403: the server refuses to serve the page (Forbidden) (2 requests)"),
    ("429", "blocked: HTTP 429: "),
    ("404", "http: HTTP 404: "),
])
def test_every_request_refused_by_the_site_exits_1_saying_why(project: Path, site: HostileSite, served: str,
                                                              why: str) -> None:
    if served == "robots":
        site.good["/robots.txt"] = page(b"User-agent: *\nDisallow: /\n", ctype="text/plain")
        site.good["/a"] = site.good["/b"] = page(PRICED)
    else:
        site.good["/a"] = site.good["/b"] = page(b"<html><body><p>Access denied</p></body></html>",
                                                status=int(served))
    done, lines = crawl(project, [f"{site.base}/a", f"{site.base}/b"], *ALLOWED)
    assert done.returncode == 1, done.stderr[-3000:]
    assert len(lines) == 1 and lines[0].startswith(f"all 2 request(s) failed, none reached the spider: {why}"), \
        done.stderr[-3000:]
    assert lines[0].endswith("(2 requests)"), lines[0]
    assert site.hits["/a"] == (0 if served == "robots" else 1)


def test_a_redirect_loop_and_a_compression_bomb_exit_1_saying_why(project: Path, site: HostileSite) -> None:
    """Both are dropped by Scrapy's middlewares raising IgnoreRequest from process_response, which
    reaches no downloader middleware's process_exception: changewatch's stand-ins note them."""
    def onward(h: BaseHTTPRequestHandler) -> None:  # /loop?N to /loop?N+1: no URL twice, so no duplicate filtered
        send(h, 302, b"", headers={"Location": f"/loop?{int(h.path.partition('?')[2] or 0) + 1}"})

    site.good["/loop"] = onward
    site.good["/bomb"] = page(gzip_bomb(2), Content_Encoding="gzip")  # 2 KB that unpack to 2 MB
    done, lines = crawl(project, [f"{site.base}/loop", f"{site.base}/bomb"], *ALLOWED, "-s", "REDIRECT_MAX_TIMES=3",
                        "-s", "DOWNLOAD_MAXSIZE=1000000", "-s", "DOWNLOAD_WARNSIZE=0")
    assert done.returncode == 1, done.stderr[-3000:]
    [line] = lines
    assert line.startswith("all 2 request(s) failed, none reached the spider: "), line
    assert "redirect: more than 3 redirections (REDIRECT_MAX_TIMES) (1 request)" in line, line
    assert "too large: " in line, line
    assert " compressed bytes unpack to more than the 1000000-byte limit (DOWNLOAD_MAXSIZE; a compression bomb?) " \
        "(1 request)" in line, line
    assert site.hits["/loop"] == 4  # the request and its 3 redirections
    assert read_feed(project / "changes.jsonl") == []


def test_an_errback_that_yields_nothing_still_fails_the_crawl(project: Path, site: HostileSite) -> None:
    site.good["/a"] = page(b"<html><body><p>Slow down</p></body></html>", status=429)
    done, lines = crawl(project, [f"{site.base}/a", f"http://127.0.0.1:{closed_port()}/b"], "-a", "swallow=1",
                        *ALLOWED)
    assert done.returncode == 1, done.stderr[-3000:]
    [line] = lines
    assert line.startswith("all 2 request(s) failed, none reached the spider: "), line
    assert "blocked: HTTP 429: " in line and "refused the connection (nothing listens there?) (1 request)" in line, line


def test_unreachable_hosts_and_timeouts_exit_1_saying_why(project: Path, site: HostileSite,
                                                          nameserver: DNSServer) -> None:
    site.good["/slow"] = hang(site)
    nameserver.set("intranet.example", "10.0.0.5")  # refused for where it resolves to, as it is resolved
    port = closed_port()
    done, lines = crawl(project, ["http://gone.example/a", f"http://127.0.0.1:{port}/b", f"{site.base}/slow",
                                  "http://intranet.example/c"],
                        "-s", f"CHANGEWATCH_SSRF_NAMESERVERS={nameserver.address}", "-s", "RETRY_TIMES=0",
                        "-s", "DOWNLOAD_TIMEOUT=2", "-s", "CHANGEWATCH_SSRF_ALLOWED_NETWORKS=127.0.0.0/8")
    assert done.returncode == 1, done.stderr[-3000:]
    [line] = lines
    assert line.startswith("all 4 request(s) failed, none reached the spider: "), line
    for why in ("dns: the host name gone.example does not resolve (1 request)",
                "refused: private: intranet.example resolved to 10.0.0.5 (1 request)",  # past the outermost middleware
                f"connection: 127.0.0.1:{port} refused the connection", "timeout: no complete answer from 127.0.0.1:"):
        assert why in line, line
    # Scrapy logs each failed download (with its traceback); the line that says why the crawl failed comes last
    errors = [line for line in done.stderr.splitlines() if "] ERROR: " in line]
    assert LINE in errors[-1], done.stderr[-3000:]


def test_a_spider_with_nothing_to_do_or_nothing_to_yield_exits_0(project: Path, site: HostileSite) -> None:
    done, lines = crawl(project, [])  # no request
    assert done.returncode == 0 and lines == [], done.stderr[-3000:]
    site.good["/empty"] = page(b"<html><body><p>No products today</p></body></html>")
    site.good["/gone"] = page(b"<html><body><p>Access denied</p></body></html>", status=403)
    done, lines = crawl(project, [f"{site.base}/empty", f"{site.base}/gone"], *ALLOWED)
    assert done.returncode == 0 and lines == [], done.stderr[-3000:]  # a page reached the spider
    assert read_feed(project / "changes.jsonl") == []


def test_a_crawl_that_observed_one_page_exits_0(project: Path, site: HostileSite) -> None:
    site.good["/a"] = page(PRICED)
    site.good["/b"] = page(b"<html><body><p>Access denied</p></body></html>", status=403)
    urls = [f"{site.base}/a", f"{site.base}/b", f"http://127.0.0.1:{closed_port()}/c"]
    for _ in (1, 2):  # a baseline, then an unchanged page
        done, lines = crawl(project, urls, *ALLOWED)
        assert done.returncode == 0 and lines == [], done.stderr[-3000:]
        assert read_feed(project / "changes.jsonl") == []
