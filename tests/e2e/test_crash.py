"""Crash safety and delivery under SIGKILL: 25 real crawls of a changing site, each killed at a
random moment, then one that is let finish. The store must open and pass an integrity check after
every kill, and the change records of all runs, deduplicated by ``change_id``, must replay into
exactly the site's final state: no change lost, none reported twice, no "everything is new"."""

from __future__ import annotations

import itertools
import random
import signal
import sqlite3
import subprocess
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from changewatch.demo.site import DemoSite
from changewatch.store.sqlite import SQLiteStore

from .crawl import Crawler, read_feed, scrapy_env

RUNS = 25
PRODUCTS = 12


def watches(base: str) -> list[dict[str, Any]]:
    products = [{"url": f"{base}/product/kettle?copy={i}", "key": f"kettle-{i}",
                 "jsonld": {"type": "Product", "fields": ["offers.price"]}} for i in range(PRODUCTS)]
    listings = {"url": f"{base}/listings", "key": "listings",
                "entities": {"selector": "li.listing", "key": "a::attr(href)", "fields": {"title": "a"}}}
    return [listings, *products, {"url": f"{base}/terms", "key": "terms", "region": "main"}]


def inject(site: DemoSite, rng: random.Random, run: int) -> None:
    site.price = f"{rng.randint(10, 99)}.{run:02d}"
    site.listings.append((f"/rent/new-{run}", f"Flat number {run}", str(500 + run)))
    if run % 3 == 0 and len(site.listings) > 2:
        site.listings.pop(rng.randrange(len(site.listings) - 1))  # never the one just added


def check_store(path: Path) -> None:
    store = SQLiteStore(path)
    store.open()  # refuses a store that fails quick_check
    store.close()
    db = sqlite3.connect(path)
    try:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        # evidence goes with its observation's commit: no change without its version, no version of
        # a change that was lost, no version without its body, and a baseline kept for every key
        changes = {row[0] for row in db.execute("SELECT id FROM changes WHERE kind IN ('field', 'entities', "
                                                "'content')")}
        kept = [row[0] for row in db.execute("SELECT change_id FROM evidence WHERE change_id IS NOT NULL")]
        assert sorted(kept) == sorted(changes)
        assert not db.execute("SELECT 1 FROM evidence e LEFT JOIN evidence_bodies b ON b.spider = e.spider "
                              "AND b.digest = e.digest WHERE b.digest IS NULL").fetchall()
        assert not db.execute("SELECT key FROM snapshots o WHERE NOT EXISTS "
                              "(SELECT 1 FROM evidence e WHERE e.spider = o.spider AND e.key = o.key)").fetchall()
    finally:
        db.close()


def replay(records: list[dict[str, Any]], site: DemoSite, base: str) -> None:
    by_id = {r["change_id"]: r for r in records if r["kind"] != "error"}
    errors = [r for r in records if r["kind"] == "error"]
    assert not errors, errors
    prices: dict[str, list[tuple[str, str]]] = defaultdict(list)
    listings: dict[str, list[str]] = defaultdict(list)
    for _, record in sorted(by_id.items()):
        if record["kind"] == "field":
            change = record["changes"]["offers.price"]
            prices[record["key"]].append((change["old"], change["new"]))
        elif record["kind"] == "entities":
            for entity in record.get("added", []):
                listings[entity["key"]].append("added")
            for entity in record.get("removed", []):
                listings[entity["key"]].append("removed")
    for i in range(PRODUCTS):  # every product's price changes chain from the first to the last
        chain = prices[f"kettle-{i}"]
        assert chain, f"kettle-{i}: no price change was ever exported"
        assert chain[0][0] == "89.00" and chain[-1][1] == site.price, chain
        assert all(a[1] == b[0] for a, b in itertools.pairwise(chain)), chain
    initial = {f"{base}/rent/12-oak-street", f"{base}/rent/7-mill-lane", f"{base}/rent/3-park-road"}
    present = set(initial)
    for key, events in listings.items():
        for event in events:  # added and removed alternate: nothing is "new" twice
            assert (event == "added") == (key not in present), (key, events)
            present.symmetric_difference_update({key})
    assert present == {base + path for path, _, _ in site.listings}


def test_kills_at_random_moments_lose_no_change_and_invent_none(demo_site: tuple[DemoSite, str],
                                                                tmp_path: Path) -> None:
    site, base = demo_site
    rng = random.Random(20261130)
    for path in ("/terms", "/listings"):
        site.delays[path] = 0.2  # spread the run out, so that kills land in every phase of it
    crawler = Crawler(tmp_path, watches(base))
    store = tmp_path / "state.db"
    started = time.monotonic()
    first = crawler.run()  # the baselines, and how long a whole run takes on this machine now
    assert first.returncode == 0 and first.records == [], first.stderr
    duration = time.monotonic() - started
    feeds: list[tuple[Path, bool]] = []
    killed = 0
    for run in range(1, RUNS + 1):
        inject(site, rng, run)
        cmd, feed = crawler.command()
        proc = subprocess.Popen(cmd, cwd=tmp_path, env=scrapy_env(), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.1, duration))  # from interpreter start-up to the feed's closing
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            killed += 1
        proc.wait(60)
        feeds.append((feed, proc.returncode < 0))
        if store.exists():
            check_store(store)
    final = crawler.run()
    assert final.returncode == 0, final.stderr
    check_store(store)
    assert killed >= RUNS // 2, f"only {killed} of {RUNS} runs were killed ({duration:.1f} s a run): too late"
    records = [r for feed, was_killed in feeds for r in read_feed(feed, killed=was_killed)] + final.records
    replay(records, site, base)
    assert crawler.run().records == []  # everything delivered: nothing is exported again
