"""The exit statuses cron and Scrapyd see (README, "Exit statuses"): a crawl whose due watches all
failed exits 1, with one line saying so; a forced shutdown (a second SIGINT) exits non-zero; a
single SIGTERM (Scrapyd's cancel) closes the spider and exits 0."""

from __future__ import annotations

import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from .crawl import Crawler, read_feed, scrapy_env
from .hostile import HostileSite, good_page, hang, page

pytestmark = pytest.mark.slow

NOTHING_OBSERVED = "ERROR: changewatch: not one page was observed: all 3 due watch(es) ended in an error"


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_crawl_whose_watches_all_failed_exits_1(site: HostileSite, tmp_path: Path) -> None:
    site.good["/hang"] = hang(site)
    site.good["/page"] = page(good_page("page"))
    failing = [{"url": f"{site.base}/gone", "key": "gone"},  # 404
               {"url": f"http://127.0.0.1:{closed_port()}/refused", "key": "refused"},
               {"url": f"{site.base}/hang", "key": "hang"}]
    crawler = Crawler(tmp_path, failing)
    fast = ("-s", "DOWNLOAD_TIMEOUT=1", "-s", "RETRY_TIMES=0")  # each run waits this long on /hang
    first = crawler.run(*fast)
    assert first.returncode == 1, first.stderr[-3000:]
    assert NOTHING_OBSERVED in first.stderr, first.stderr[-3000:]
    assert "never retrieved" not in first.stderr  # (Scrapy logs the refused robots.txt with its traceback)
    # each watch's error record still left the crawl, as on any run
    assert sorted(r["key"] for r in first.records if r["kind"] == "error") == ["gone", "hang", "refused"]
    assert first.stats["changewatch/runtime/failed"] == 1
    # still failing (the errors are not reported again): still 1
    again = crawler.run(*fast)
    assert again.returncode == 1 and NOTHING_OBSERVED in again.stderr, again.stderr[-3000:]
    # one page observed among failures: the crawl did its work, 0
    crawler.write_watchlist([*failing, {"url": f"{site.base}/page", "key": "page"}])
    mixed = crawler.run(*fast)
    assert mixed.returncode == 0, mixed.stderr[-3000:]
    assert "not one page was observed" not in mixed.stderr


def test_nothing_due_is_not_a_failure(site: HostileSite, tmp_path: Path) -> None:
    """A refused watch that is not due this run (every: 1d) is not fetched: nothing failed."""
    crawler = Crawler(tmp_path, [{"url": f"http://127.0.0.1:{closed_port()}/x", "key": "x", "every": "1d"}])
    assert crawler.run().returncode == 1  # due on its first run, and failed
    quiet = crawler.run()
    assert quiet.returncode == 0, quiet.stderr[-3000:]
    assert quiet.stats.get("changewatch/schedule/skipped") == 1


def _interrupted(site: HostileSite, tmp_path: Path, signals: list[signal.Signals]) -> tuple[int, str, Path]:
    """A crawl with three good pages and two that hang, sent *signals* (half a second apart) once
    every page has been asked for: about a second into the hanging pages' 5 s (DOWNLOAD_TIMEOUT),
    which a clean close waits out."""
    for i in range(3):
        site.good[f"/p{i}"] = page(good_page(f"p{i}"))
    for i in range(2):
        site.good[f"/hang{i}"] = hang(site)
    watches = [{"url": f"{site.base}/p{i}", "key": f"p{i}"} for i in range(3)]
    watches += [{"url": f"{site.base}/hang{i}", "key": f"hang{i}"} for i in range(2)]
    cmd, feed = Crawler(tmp_path, watches).command("-s", "DOWNLOAD_TIMEOUT=5", "-s", "RETRY_TIMES=0")
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=scrapy_env(), stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not all(site.hits[f"/hang{i}"] for i in range(2)) and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(0.5)
    for sent in signals:
        proc.send_signal(sent)
        time.sleep(0.5)
    _, stderr = proc.communicate(timeout=120)
    return proc.returncode, stderr, feed


def test_a_forced_shutdown_exits_non_zero(site: HostileSite, tmp_path: Path) -> None:
    status, stderr, _ = _interrupted(site, tmp_path, [signal.SIGINT, signal.SIGINT])
    assert "forcing unclean shutdown" in stderr, stderr[-3000:]
    assert status == 1, stderr[-3000:]
    assert "ERROR: changewatch: forced shutdown: the crawl was stopped before its spider closed" in stderr
    assert "Traceback" not in stderr


def test_one_sigterm_closes_cleanly_and_exits_0(site: HostileSite, tmp_path: Path) -> None:
    """Scrapyd's cancel: the spider closes (the hanging pages time out), the feed is written."""
    status, stderr, feed = _interrupted(site, tmp_path, [signal.SIGTERM])
    assert status == 0, stderr[-3000:]
    assert "Spider closed (shutdown)" in stderr and "forced shutdown" not in stderr
    assert "Traceback" not in stderr
    assert feed.exists()
    read_feed(feed)  # a complete JSON-lines file
