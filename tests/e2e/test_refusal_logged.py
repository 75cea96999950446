"""End to end: every entry point says why the SSRF guard refused an address.

``scrapy shell`` on a refused address used to print ``None`` and nothing else at any log level:
Scrapy drops an IgnoreRequest silently. The guard logs one WARNING per refused request (URL
without credentials, rule and detail); a crawl of the watch spider, whose errback reports the
refusal as a ``refused:`` error record, logs it at DEBUG only."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from .crawl import Crawler, by_key, scrapy_env
from .hostile import HostileSite, page

LINE = "[changewatch.guard.middleware] WARNING: SSRF guard refused GET "


def scrapy(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``scrapy ARGS`` in a project that enables the changewatch add-on (its own settings)."""
    (project / "scrapy.cfg").write_text("[settings]\ndefault = changewatch.settings\n", encoding="utf-8")
    env = {k: v for k, v in scrapy_env().items() if k != "SCRAPY_SETTINGS_MODULE"}
    return subprocess.run([sys.executable, "-m", "scrapy", *args, "-s", f"CHANGEWATCH_STORE=sqlite:///{project}/s.db"],
                          cwd=project, env=env, capture_output=True, text=True, timeout=120)


def refusals(stderr: str) -> list[str]:
    return [line.split(LINE, 1)[1] for line in stderr.splitlines() if LINE in line]


def test_scrapy_shell_says_why_it_got_no_response(site: HostileSite, tmp_path: Path) -> None:
    site.good["/"] = page(b"<html><body><p>internal</p></body></html>")
    proc = scrapy(tmp_path, "shell", "-c", "response", f"{site.base}/")
    assert proc.stdout.strip() == "None", proc.stdout
    assert refusals(proc.stderr) == [f"{site.base}/: loopback: 127.0.0.1"], proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr and not site.hits


def test_scrapy_fetch_says_why_without_the_credentials(site: HostileSite, tmp_path: Path) -> None:
    url = f"http://user:hunter2@127.0.0.1:{site.port}/private"
    proc = scrapy(tmp_path, "fetch", "-s", "LOG_LEVEL=WARNING", url)
    assert refusals(proc.stderr) == [f"{site.base}/private: credentials: the URL carries a user name or password; "
                                     "use HTTP auth settings instead"], proc.stderr[-3000:]
    assert "hunter2" not in proc.stderr and "Traceback" not in proc.stderr and not site.hits


def test_a_watch_crawl_reports_the_refusal_as_a_record_not_a_warning(site: HostileSite, tmp_path: Path) -> None:
    site.good["/"] = page(b"<html><body><p>internal</p></body></html>")
    crawler = Crawler(tmp_path, [{"key": "internal", "url": f"{site.base}/"}], allow_private=False)
    for run in (1, 2):
        result = crawler.run()
        assert result.returncode == 1, result.stderr[-3000:]  # its one watch failed: not one page observed
        assert not refusals(result.stderr), result.stderr[-3000:]
        # the page and its robots.txt, refused both (neither logged: the page's record says why)
        assert result.stats.get("changewatch/ssrf/refused_url") == 2, result.stats
        if run == 1:  # once per streak
            assert by_key(result.records)["internal"]["error"] == "refused: loopback: 127.0.0.1"
        else:
            assert result.records == []
    assert not site.hits


def test_scrapy_parse_says_why_it_got_no_response(site: HostileSite, tmp_path: Path) -> None:
    (tmp_path / "w.yaml").write_text(f"watches:\n  - url: {site.base}/\n", encoding="utf-8")
    proc = scrapy(tmp_path, "parse", "--spider", "watch", "-a", "watchlist=w.yaml", f"{site.base}/")
    assert refusals(proc.stderr) == [f"{site.base}/: loopback: 127.0.0.1"], proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr and not site.hits
