"""Bad input for rendered watches, each through a real crawl: it becomes an error record or a
clear stop, never a page quietly fetched without rendering."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from ..e2e.crawl import Crawler, by_key, read_feed, scrapy_env
from .site import JsSite

pytestmark = pytest.mark.slow  # crawls in subprocesses that render in Chromium


def _big_page(js_site: JsSite, scripts: int, size: int) -> None:
    tags = "".join(f'<script src="/big{i}.js"></script>' for i in range(scripts))
    page = f"<!doctype html><html><head><title>big</title>{tags}</head><body><p>Big page</p></body></html>"
    js_site.extra["/big"] = lambda h: js_site.send(h, page.encode(), "text/html; charset=utf-8")
    for i in range(scripts):
        body = ("/*" + "x" * size + "*/").encode()
        js_site.extra[f"/big{i}.js"] = lambda h, body=body: js_site.send(h, body, "text/javascript")


def test_a_page_whose_resources_together_pass_download_maxsize_is_an_error(js_site: JsSite, tmp_path: Path) -> None:
    _big_page(js_site, scripts=4, size=60_000)  # each under the limit, together over it
    crawler = Crawler(tmp_path, [{"url": js_site.base + "/big", "key": "big", "render": True},
                                 {"url": js_site.url("p0"), "key": "small", "render": True}])
    result = crawler.run("-s", "DOWNLOAD_MAXSIZE=150000")
    assert result.returncode == 0, result.stderr[-3000:]
    records = by_key(result.records)
    assert set(records) == {"big"}
    assert records["big"]["error"] == ("too large: the page and the resources it loaded came to more than 150000 "
                                       "bytes (DOWNLOAD_MAXSIZE)")
    assert result.stats["changewatch/render/too_large"] == 1


@pytest.mark.parametrize(("render", "problem"), [
    ({"timeout": 0}, "render.timeout"), ({"timeout": -5}, "render.timeout"), ({"block": ["script"]}, "render.block"),
    ({"wait_for": "div["}, "render.wait_for"), ("yes", "render")])
def test_a_bad_render_option_stops_the_crawl_before_it_fetches(render: object, problem: str, js_site: JsSite,
                                                              tmp_path: Path) -> None:
    crawler = Crawler(tmp_path, [{"url": js_site.url("p0"), "render": render}], valid_watchlist=False)
    result = crawler.run()
    assert result.returncode == 1 and result.records == []
    errors = [line for line in result.stderr.splitlines() if "ERROR" in line]
    assert errors and "The watch spider cannot start" in errors[0] and problem in result.stderr, result.stderr[-2000:]
    assert js_site.hits == {}


def test_render_on_a_json_watch_is_refused(js_site: JsSite, tmp_path: Path) -> None:
    crawler = Crawler(tmp_path, [{"url": js_site.base + "/data/p0.json", "type": "json", "render": True}],
                      valid_watchlist=False)
    result = crawler.run()
    assert result.returncode == 1 and "render read HTML pages, not a json document" in result.stderr
    assert js_site.hits == {}


def test_a_json_document_asked_to_render_is_read_as_it_came(js_site: JsSite, tmp_path: Path) -> None:
    crawler = Crawler(tmp_path, [{"url": js_site.base + "/data/p0.json", "key": "api", "render": True}])
    assert crawler.run().returncode == 0
    js_site.pages["p0"]["price"] = "1.00 EUR"
    result = crawler.run()
    assert result.returncode == 0, result.stderr[-2000:]
    [record] = result.records
    assert record["kind"] == "content" and '"price": "1.00 EUR"' in record["diff"]  # JSON's text, not a viewer's
    # the load and the one that confirmed the change: both read as they came
    assert result.stats["changewatch/confirm/sent"] == 1
    assert result.stats["changewatch/render/not_html"] == 2 and "changewatch/render/rendered" not in result.stats


def test_a_browser_path_that_does_not_exist_stops_the_crawl_at_start(js_site: JsSite, tmp_path: Path) -> None:
    crawler = Crawler(tmp_path, [{"url": js_site.url("p0"), "render": True}])
    result = crawler.run("-s", "CHANGEWATCH_RENDER_BROWSER=/opt/no/chromium")
    assert result.returncode != 0 and js_site.hits == {}
    assert ("CHANGEWATCH_RENDER_BROWSER = '/opt/no/chromium': expected the path of an executable "
            "file, or an empty value to find one (no such file)") in result.stderr
    assert "Traceback" not in result.stderr


def test_no_browser_at_all_stops_a_crawl_that_renders_and_not_one_that_does_not(js_site: JsSite,
                                                                               tmp_path: Path) -> None:
    env = {"PATH": "/nonexistent", "PLAYWRIGHT_BROWSERS_PATH": str(tmp_path / "none")}
    renders = Crawler(tmp_path / "a", None)
    (tmp_path / "a").mkdir()
    renders.write_watchlist([{"url": js_site.url("p0"), "render": True}])
    result = _run_with_env(renders, env)
    assert result[0] == 1 and js_site.hits == {}
    assert "watches with render need a browser and there is none: install Debian's chromium (apt-get install " \
           "chromium)" in result[1]
    plain = Crawler(tmp_path / "b", None)
    (tmp_path / "b").mkdir()
    plain.write_watchlist([{"url": js_site.url("p0")}])
    assert _run_with_env(plain, env)[0] == 0 and js_site.hits["/p/p0"] == 2  # a baseline of two loads


def _run_with_env(crawler: Crawler, env: dict[str, str]) -> tuple[int, str]:
    cmd, _ = crawler.command()
    proc = subprocess.run(cmd, cwd=crawler.workdir, env={**scrapy_env(), **env}, capture_output=True, text=True,
                          timeout=300)
    return proc.returncode, proc.stderr


def _browser_pids(root: int) -> list[int]:
    """The crawl's browser processes (Chromium's main process: the one with our proxy flag)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            status = Path(f"/proc/{entry}/status").read_text()
        except OSError:
            continue
        ppid = int(next(line.split()[1] for line in status.splitlines() if line.startswith("PPid:")))
        if any(a.startswith(b"--proxy-server=") for a in cmdline) and ppid != 1 and _descends(ppid, root):
            found.append(int(entry))
    return found


def _descends(pid: int, root: int) -> bool:
    for _ in range(10):
        if pid == root:
            return True
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            return False
        pid = int(next(line.split()[1] for line in status.splitlines() if line.startswith("PPid:")))
    return False


def _crawl_killing_browsers(crawler: Crawler, js_site: JsSite, *, times: int) -> tuple[int, Path, str]:
    """Run a crawl and SIGKILL its browser *times* times, each time while a page is loading."""
    cmd, feed = crawler.command("-s", "CHANGEWATCH_RENDER_TIMEOUT=60")
    proc = subprocess.Popen(cmd, cwd=crawler.workdir, env=scrapy_env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        for kill in range(times):
            deadline = time.monotonic() + 60
            while js_site.hits["/slow.js"] <= kill and time.monotonic() < deadline and proc.poll() is None:
                time.sleep(0.05)
            pids = _browser_pids(proc.pid)
            assert pids, f"no browser found while the page was loading (kill {kill + 1})"
            for pid in pids:
                os.kill(pid, signal.SIGKILL)
        _, stderr = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, feed, stderr


def _slow_page(js_site: JsSite) -> None:
    js_site.extra["/slow"] = lambda h: js_site.send(h, b'<!doctype html><title>slow</title><main>Slow</main>'
                                                    b'<script src="/slow.js"></script>', "text/html")
    js_site.extra["/slow.js"] = lambda h: (time.sleep(3), js_site.send(h, b"1", "text/javascript"))  # type: ignore[func-returns-value]


def test_a_browser_that_crashes_mid_render_is_started_again(js_site: JsSite, tmp_path: Path) -> None:
    _slow_page(js_site)
    crawler = Crawler(tmp_path, [{"url": js_site.base + "/slow", "key": "slow", "render": True}])
    returncode, feed, stderr = _crawl_killing_browsers(crawler, js_site, times=1)
    assert returncode == 0, stderr[-3000:]
    assert read_feed(feed) == []  # scrapy-playwright tried the page again, in a new browser: a baseline
    stats = json.loads((tmp_path / "stats-1.json").read_text())
    assert stats["playwright/browser_count"] == 2 and stats["changewatch/commit/baseline"] == 1


def test_a_browser_that_keeps_crashing_fails_its_page_and_the_next_crawl_goes_on(js_site: JsSite,
                                                                               tmp_path: Path) -> None:
    _slow_page(js_site)
    crawler = Crawler(tmp_path, [{"url": js_site.base + "/slow", "key": "slow", "render": True}])
    returncode, feed, stderr = _crawl_killing_browsers(crawler, js_site, times=4)  # its first try and 3 retries
    # its one watch failed: a crawl that observed no page says so with exit 1
    assert returncode == 1 and "not one page was observed" in stderr, stderr[-3000:]
    [record] = read_feed(feed)
    assert record["kind"] == "error" and record["error"].startswith("render: the browser crashed rendering "), record
    js_site.extra["/slow.js"] = lambda h: js_site.send(h, b"1", "text/javascript")
    crawler.write_watchlist([{"url": js_site.base + "/slow", "key": "slow", "render": True},
                             {"url": js_site.url("p0"), "key": "other", "render": True}])
    after = crawler.run()
    # each page's first observation is two renders (a baseline's second load teaches where it varies)
    assert after.returncode == 0 and after.stats["changewatch/render/rendered"] == 4, after.stderr[-3000:]
    assert [r["kind"] for r in after.records] == ["recovered"]
