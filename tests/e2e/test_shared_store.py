"""Several crawls sharing one store at the same time, as Scrapyd nodes or overlapping cron jobs
do: every change is exported exactly once across all of them, and none is lost."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import time
from contextlib import closing
from pathlib import Path
from typing import Any

from changewatch.demo.site import DemoSite
from tests.changes import field

from ..polling import wait_until
from .crawl import ROOT, crawl_command, read_feed, scrapy_env
from .rounds import product

PRODUCTS = 40
CRAWLS = 3


def price(i: int, round_: int) -> str:
    # every third product changes price in each round after the first
    return f"{10 + i + (round_ if i % 3 == 0 else 0)}.00"


def run_together(workdir: Path, watchlist: Path, store: str, round_: int) -> list[list[dict[str, Any]]]:
    procs = []
    for n in range(CRAWLS):
        cmd, feed = crawl_command(workdir, "watch", round_ * 10 + n, "-a", f"watchlist={watchlist}",
                                  "-s", f"CHANGEWATCH_STORE={store}", "-s", "CHANGEWATCH_ALLOW_PRIVATE=True",
                                  "-s", "CHANGEWATCH_WORKERS=0", "-s", "LOG_LEVEL=WARNING")
        procs.append((subprocess.Popen(cmd, cwd=workdir, env=scrapy_env(), stdout=subprocess.DEVNULL,
                                       stderr=subprocess.PIPE, text=True), feed))
    feeds = []
    for proc, feed in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err[-3000:]
        feeds.append(read_feed(feed))
    return feeds


def test_concurrent_crawls_export_each_change_once(tmp_path: Path, demo_site: tuple[DemoSite, str]) -> None:
    site, base = demo_site
    watchlist = tmp_path / "watchlist.yaml"
    watchlist.write_text(json.dumps({"watches": [
        {"url": f"{base}/p/{i}", "key": f"p{i}", "jsonld": {"type": "Product", "fields": ["offers.price"]}}
        for i in range(PRODUCTS)]}), encoding="utf-8")
    store = f"sqlite:///{tmp_path / 'state.db'}"
    assert ROOT.exists()
    for round_ in range(3):
        for i in range(PRODUCTS):
            site.overrides[f"/p/{i}"] = (200, "text/html; charset=utf-8", product(i, price(i, round_)))
        feeds = run_together(tmp_path, watchlist, store, round_)
        records = [r for feed in feeds for r in feed]
        assert not [r for r in records if r.get("redelivery")]  # live crawls never re-export each other's
        changed = sorted(r["key"] for r in records)
        expected = sorted(f"p{i}" for i in range(PRODUCTS) if round_ and i % 3 == 0)
        assert changed == expected, (round_, changed)
        for r in records:
            i = int(r["key"][1:])
            assert r["changes"] == {"offers.price": field(price(i, round_ - 1), price(i, round_),
                                                      str(10 + i + round_ - 1), str(10 + i + round_))}
        assert len({r["change_id"] for r in records}) == len(records)


def _changes_logged(path: Path) -> int:
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        return int(db.execute("SELECT count(*) FROM changes").fetchone()[0])


def test_a_running_crawl_keeps_its_claim_on_its_changes(tmp_path: Path, demo_site: tuple[DemoSite, str]) -> None:
    """A crawl's changes are leased to it, and it renews the lease while it runs: a second crawl
    that starts while the first is still busy must not export the first one's changes again,
    even when it starts long after the lease would have run out without renewal."""
    site, base = demo_site
    watchlist = tmp_path / "watchlist.yaml"
    watchlist.write_text(json.dumps({"watches": [
        {"url": f"{base}/p/fast", "key": "fast", "jsonld": {"type": "Product", "fields": ["offers.price"]}},
        {"url": f"{base}/p/slow", "key": "slow", "jsonld": {"type": "Product", "fields": ["offers.price"]}}]}),
        encoding="utf-8")
    store = f"sqlite:///{tmp_path / 'state.db'}"
    common = ("-a", f"watchlist={watchlist}", "-s", f"CHANGEWATCH_STORE={store}",
              "-s", "CHANGEWATCH_ALLOW_PRIVATE=True", "-s", "CHANGEWATCH_WORKERS=0",
              "-s", "CHANGEWATCH_DELIVERY_LEASE=2s", "-s", "LOG_LEVEL=WARNING")
    for name in ("fast", "slow"):
        site.overrides[f"/p/{name}"] = (200, "text/html; charset=utf-8", product(1, "10.00"))
    cmd, _ = crawl_command(tmp_path, "watch", 1, *common)
    assert subprocess.run(cmd, cwd=tmp_path, env=scrapy_env(), capture_output=True, timeout=300).returncode == 0

    site.overrides["/p/fast"] = (200, "text/html; charset=utf-8", product(1, "9.00"))
    site.delays["/p/slow"] = 7.0
    first_cmd, first_feed = crawl_command(tmp_path, "watch", 2, *common)
    first = subprocess.Popen(first_cmd, cwd=tmp_path, env=scrapy_env(), stderr=subprocess.PIPE, text=True)
    # the first crawl logs the change of "fast" and waits for "slow": the second starts after the
    # 2 s lease it exported "fast" under would have run out without renewal
    assert wait_until(lambda: _changes_logged(tmp_path / "state.db") == 1, timeout=60)
    time.sleep(2.5)
    assert first.poll() is None, "the first crawl ended too soon for this test to mean anything"
    second_cmd, second_feed = crawl_command(tmp_path, "watch", 3, *common)
    second = subprocess.run(second_cmd, cwd=tmp_path, env=scrapy_env(), capture_output=True, text=True, timeout=300)
    _, err = first.communicate(timeout=300)
    assert first.returncode == 0 and second.returncode == 0, err[-2000:] + second.stderr[-2000:]
    assert [r["key"] for r in read_feed(first_feed)] == ["fast"]
    assert read_feed(second_feed) == []  # neither a redelivery of "fast" nor a change of its own
