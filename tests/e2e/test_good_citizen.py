"""Fetching like a good citizen, through real crawls with the project's own settings."""

from __future__ import annotations

import os
import re
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from scrapy.addons import AddonManager
from scrapy.utils.project import get_project_settings

from changewatch import __version__

from .crawl import Crawler, by_key
from .hostile import HostileSite, endless, good_page, hang, page, send


def test_project_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(os.environ, "SCRAPY_SETTINGS_MODULE", "changewatch.settings")
    settings = get_project_settings()
    AddonManager.load_pre_crawler_settings(settings)  # what `scrapy crawl` does with them: the add-on's defaults
    assert settings["USER_AGENT"] == f"changewatch/{__version__} (+https://github.com/changewatch/changewatch)"
    assert settings.getbool("ROBOTSTXT_OBEY")
    assert 0 < settings.getfloat("DOWNLOAD_TIMEOUT") <= 30
    assert settings.getint("DOWNLOAD_MAXSIZE") == 10 * 1024 * 1024
    assert 0 <= settings.getint("RETRY_TIMES") <= 3 and 429 not in settings.getlist("RETRY_HTTP_CODES")
    assert 0 < settings.getint("CONCURRENT_REQUESTS_PER_DOMAIN") <= 8
    assert settings["TWISTED_DNS_RESOLVER"] == "changewatch.guard.GuardedResolver"
    assert not settings.getbool("REMOTE_CONTROL_ENABLED") and not settings.getbool("TELNETCONSOLE_ENABLED")
    assert not settings.getbool("CHANGEWATCH_ALLOW_PRIVATE", False)


def _enabled(stderr: str, what: str) -> str:
    match = re.search(rf"Enabled {what}:\n(\[.*?\])", stderr, re.S)
    assert match, f"no 'Enabled {what}' in the log"
    return match[1]


def test_a_crawl_has_no_control_server_says_who_it_is_and_obeys_robots(site: HostileSite, tmp_path: Path) -> None:
    site.good["/robots.txt"] = page(b"User-agent: *\nDisallow: /private\n", ctype="text/plain")
    site.good["/page"] = page(good_page("page"))
    site.good["/private/page"] = page(good_page("private"))
    crawler = Crawler(tmp_path, [{"url": f"{site.base}/page", "key": "page"},
                                 {"url": f"{site.base}/private/page", "key": "private"}])
    result = crawler.run()
    assert result.returncode == 0, result.stderr[-3000:]
    extensions = _enabled(result.stderr, "extensions")
    assert "TelnetConsole" not in extensions and "RemoteControl" not in extensions
    assert "Telnet console listening" not in result.stderr
    assert "changewatch.guard.SSRFGuardMiddleware" in _enabled(result.stderr, "downloader middlewares")
    assert set(site.agents) == {f"changewatch/{__version__} (+https://github.com/changewatch/changewatch)"}
    assert site.events[0] == "GET /robots.txt" and site.hits["/private/page"] == 0
    assert by_key(result.records)["private"]["error"] == ("robots: the site's robots.txt disallows this URL "
                                                          "(ROBOTSTXT_OBEY)")


def test_every_page_that_waited_for_robots_txt_is_judged_by_it(site: HostileSite, tmp_path: Path) -> None:
    """The requests of one host that arrive while its robots.txt is on its way wait for it, and
    each is judged by it: not only the first to wait. (Scrapy 2.19's RobotsTxtMiddleware gave the
    rules to the first and None, no rules at all, to the others, which were then fetched.)"""
    def robots_after_a_while(h: BaseHTTPRequestHandler) -> None:
        time.sleep(1)  # every watch's request is waiting for it by then
        send(h, 200, b"User-agent: *\nDisallow: /private\n", ctype="text/plain")

    site.good["/robots.txt"] = robots_after_a_while
    private = [f"/private/{i}" for i in range(5)]
    for path in ["/page", *private]:
        site.good[path] = page(good_page(path))
    result = Crawler(tmp_path, [{"url": f"{site.base}{path}", "key": path} for path in ["/page", *private]]).run()
    assert result.returncode == 0, result.stderr[-3000:]
    assert site.hits["/robots.txt"] == 1 and site.hits["/page"] >= 1  # a baseline may load a page twice
    assert not any(site.hits[path] for path in private), site.events
    records = by_key(result.records)
    assert {key: records[key]["error"] for key in private} == dict.fromkeys(
        private, "robots: the site's robots.txt disallows this URL (ROBOTSTXT_OBEY)")
    assert result.stats["robotstxt/forbidden"] == len(private)


def test_one_bad_watch_does_not_delay_or_abort_the_others(site: HostileSite, tmp_path: Path) -> None:
    """A hanging page times out (with its bounded retries) while the other pages are fetched;
    a page over the size limit and a server error are errors beside them, not crashes."""
    site.good["/hang"] = hang(site)
    site.good["/endless"] = endless
    site.good["/broken"] = page(b"<h1>oops</h1>", 500)
    good = [f"/page{i}" for i in range(6)]
    for path in good:
        site.good[path] = page(good_page(path))
    watches = [{"url": f"{site.base}{p}", "key": p} for p in ["/hang", "/endless", "/broken", *good]]
    result = Crawler(tmp_path, watches).run("-s", "DOWNLOAD_TIMEOUT=6", "-s", "RETRY_TIMES=1")
    assert result.returncode == 0, result.stderr[-3000:]
    errors = {k: r["error"] for k, r in by_key(result.records).items()}
    assert set(errors) == {"/hang", "/endless", "/broken"}
    assert errors["/hang"].startswith("timeout:")
    assert errors["/endless"].startswith("too large:")
    assert errors["/broken"] == "http: HTTP 500: the server failed to answer (Internal Server Error)"
    assert result.stats["changewatch/commit/baseline"] == len(good)
    # every good page was requested before the crawler gave up on the hanging one the first time
    first_abandoned = site.events.index("abandoned /hang")
    assert all(site.events.index(f"GET {p}") < first_abandoned for p in good), site.events
    deadline = time.monotonic() + 30  # the server notices the last hang-up a moment after the crawl ends
    while site.events.count("abandoned /hang") < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert site.events.count("abandoned /hang") == 2  # one retry, then an error record
