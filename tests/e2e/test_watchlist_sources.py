"""End to end: ``scrapy crawl watch`` with its watchlist at a URL or inline; a watchlist that cannot
be had stops the crawl at start, exit status 1, one clear line, nothing fetched or stored."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .crawl import ROOT, scrapy_crawl
from .hostile import HostileSite, good_page, hang, page


def known_options() -> list[str]:
    """The watch options an unknown one's message lists (every option of a watch, as the model has them)."""
    from changewatch.watchlist.errors import _KNOWN

    return list(_KNOWN[""])


def store_args(tmp_path: Path, *extra: str) -> tuple[str, ...]:
    return ("-s", f"CHANGEWATCH_STORE=sqlite:///{tmp_path / 'state.db'}", *extra)


def test_a_watchlist_url_is_fetched_once_with_the_user_agent(site: HostileSite, tmp_path: Path) -> None:
    site.good["/page"] = page(good_page("page"))
    site.good["/w.json"] = page(json.dumps({"watches": [{"url": site.base + "/page", "key": "p"}]}).encode(),
                                ctype="application/json")
    run = scrapy_crawl(tmp_path, "watch", 1, "-a", f"watchlist={site.base}/w.json",
                       *store_args(tmp_path, "-s", "CHANGEWATCH_ALLOW_PRIVATE=True"))
    assert run.returncode == 0, run.stderr[-3000:]
    assert site.hits["/w.json"] == 1 and site.hits["/page"] == 2  # the page's baseline: two loads
    assert run.stats["changewatch/watch/observed"] == 1
    assert all(agent.startswith("changewatch/") for agent in site.agents), site.agents


def test_inline_json(site: HostileSite, tmp_path: Path) -> None:
    site.good["/page"] = page(good_page("page"))
    watches = json.dumps([{"url": site.base + "/page", "key": "p"}])
    run = scrapy_crawl(tmp_path, "watch", 1, "-a", f"watchlist={watches}",
                       *store_args(tmp_path, "-s", "CHANGEWATCH_ALLOW_PRIVATE=True"))
    assert run.returncode == 0, run.stderr[-3000:]
    assert site.hits["/page"] == 2  # the page's baseline: two loads


@pytest.mark.parametrize(("path", "settings", "message"), [
    ("/w.json", (), r"cannot fetch watchlist http://127\.0\.0\.1:\d+/w\.json: refused: loopback: 127\.0\.0\.1 "
                    r"\(a watchlist on this machine or network needs CHANGEWATCH_ALLOW_PRIVATE=True"),
    ("/slow", ("CHANGEWATCH_ALLOW_PRIVATE=True", "CHANGEWATCH_WATCHLIST_TIMEOUT=1"),
     r"cannot fetch watchlist .*/slow: timeout: no complete answer from .*/slow within 1 s"),
    ("/w.json", ("CHANGEWATCH_ALLOW_PRIVATE=True", "CHANGEWATCH_WATCHLIST_MAXSIZE=10"),
     r"cannot fetch watchlist .*/w\.json: too large: .* announces \d+ bytes, more than the 10 allowed"),
    ("/html", ("CHANGEWATCH_ALLOW_PRIVATE=True",), r"watchlist .*/html is not valid YAML"),
])
def test_a_watchlist_url_that_cannot_be_had_stops_the_crawl(
        site: HostileSite, tmp_path: Path, path: str, settings: tuple[str, ...], message: str) -> None:
    site.good["/page"] = page(good_page("page"))
    site.good["/w.json"] = page(json.dumps({"watches": [{"url": site.base + "/page"}]}).encode())
    site.good["/slow"] = hang(site)
    site.good["/html"] = page(b"<html><body><p>Sign in: <b>here</b></p>\n  x: [</body></html>")
    start = time.monotonic()
    run = scrapy_crawl(tmp_path, "watch", 1, "-a", f"watchlist={site.base}{path}",
                       *store_args(tmp_path, *(arg for s in settings for arg in ("-s", s))))
    assert run.returncode == 1, run.stderr[-3000:]
    assert time.monotonic() - start < 30
    lines = [line for line in run.stderr.splitlines() if "ERROR: The watch spider cannot start: " in line]
    assert len(lines) == 1, run.stderr[-3000:]
    assert re.search(message, lines[0]), lines[0]
    assert "/page" not in site.hits
    assert not (tmp_path / "state.db").exists()


def test_a_relative_path_is_read_from_the_watchlist_dir(site: HostileSite, tmp_path: Path) -> None:
    site.good["/page"] = page(good_page("page"))
    lists = tmp_path / "lists"
    lists.mkdir()
    (lists / "w.json").write_text(json.dumps({"watches": [{"url": site.base + "/page", "key": "p"}]}))
    run = scrapy_crawl(tmp_path, "watch", 1, "-a", "watchlist=w.json",  # the crawl runs in tmp_path
                       *store_args(tmp_path, "-s", "CHANGEWATCH_ALLOW_PRIVATE=True",
                                   "-s", f"CHANGEWATCH_WATCHLIST_DIR={lists}"))
    assert run.returncode == 0, run.stderr[-3000:]
    assert site.hits["/page"] == 2  # the page's baseline: two loads


@pytest.mark.parametrize("how", ["file", "inline", "url"])
def test_an_invalid_watchlist_prints_its_problems_alone_and_exits_non_zero(
        site: HostileSite, tmp_path: Path, how: str) -> None:
    """Validation errors are not buried in a "Task exception was never retrieved" traceback:
    every problem is listed, once, after the one ERROR line's prefix; nothing else."""
    site.good["/page"] = page(good_page("page"))
    watches = [{"url": site.base + "/a page", "regoin": "main"}, {"url": site.base + "/page", "threshold": 99}]
    text = json.dumps({"watches": watches})
    (tmp_path / "w.json").write_text(text, encoding="utf-8")
    site.good["/w.json"] = page(text.encode(), ctype="application/json")
    argument = {"file": "w.json", "inline": text, "url": f"{site.base}/w.json"}[how]
    run = scrapy_crawl(tmp_path, "watch", 1, "-a", f"watchlist={argument}",
                       *store_args(tmp_path, "-s", "CHANGEWATCH_ALLOW_PRIVATE=True"), valid_watchlist=False)
    assert run.returncode == 1, run.stderr[-3000:]
    assert "Traceback" not in run.stderr and "never retrieved" not in run.stderr, run.stderr[-3000:]
    assert "pydantic" not in run.stderr and "Input should" not in run.stderr, run.stderr[-3000:]
    start = run.stderr.index("ERROR: The watch spider cannot start: ")
    message = run.stderr[start:].splitlines()[:3]
    assert "url must not contain spaces (encode them as %20)" in message[0], message
    assert message[1].endswith("watch #1 (" + site.base + "/a page): unknown option regoin (did you mean region?); "
                               "known: " + ", ".join(known_options()))
    assert message[2].endswith(": watch #2 (" + site.base + "/page): threshold must be a whole number of bits from 0 "
                               "to 64, not 99"), message
    assert run.stderr.count("The watch spider cannot start") == 1 and run.stderr.count("regoin") == 1
    assert "/page" not in site.hits and not (tmp_path / "state.db").exists()


def test_no_watchlist_at_all_says_so_alone(tmp_path: Path) -> None:
    run = scrapy_crawl(tmp_path, "watch", 1, *store_args(tmp_path))
    assert run.returncode == 1, run.stderr[-3000:]
    assert "ERROR: The watch spider cannot start: the watch spider needs a watchlist: scrapy crawl watch -a " \
           "watchlist=FILE" in run.stderr, run.stderr[-3000:]
    assert "Traceback" not in run.stderr and "never retrieved" not in run.stderr, run.stderr[-3000:]
    assert not (tmp_path / "state.db").exists()


def test_without_the_add_on_a_bad_watchlist_still_fails_the_crawl(tmp_path: Path) -> None:
    """A project that lists changewatch's spiders but not its add-on stops as the spider is built,
    with the line that says to add it (before its watchlist is read), exit 1: it never fetches
    nothing and exits 0."""
    (tmp_path / "scrapy.cfg").write_text("[settings]\ndefault = bare_settings\n", encoding="utf-8")
    (tmp_path / "bare_settings.py").write_text('SPIDER_MODULES = ["changewatch.spiders"]\n', encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "SCRAPY_SETTINGS_MODULE"}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), str(ROOT), env.get("PYTHONPATH", "")])
    run = subprocess.run([sys.executable, "-m", "scrapy", "crawl", "watch", "-a", 'watchlist=[{"url": "ftp://x"}]'],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 1, run.stderr[-3000:]
    assert "spider 'watch' needs changewatch enabled: add ADDONS" in run.stderr
