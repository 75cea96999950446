"""End to end, the worker processes and the store under faults: a page that kills or hangs its
worker is an error of its key (baseline kept, the rest of the crawl unharmed), and a store that
stops taking writes mid-crawl stops the crawl with a non-zero exit, nothing half-written."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from changewatch.demo.site import DemoSite
from changewatch.store.sqlite import SQLiteStore

from .crawl import Crawler, by_key
from .hostile import good_page
from .plugins import KILL_MARKER

PAGES = ("a", "b", "c")
PLUGINS = ("-s", 'CHANGEWATCH_COMPARISONS={"worker_killer": "tests.e2e.plugins.WorkerKiller"}')


def serve(site: DemoSite, bodies: dict[str, bytes]) -> None:
    for name, body in bodies.items():
        site.overrides[f"/{name}"] = (200, "text/html; charset=utf-8", body)


def watches(base: str) -> list[dict[str, str]]:
    return [{"url": f"{base}/{name}", "key": name} for name in PAGES]


def test_a_page_that_kills_its_worker_is_an_error_of_its_key(tmp_path: Path, demo_site: tuple[DemoSite, str]) -> None:
    site, base = demo_site
    crawler = Crawler(tmp_path, watches(base))
    pages = {name: good_page(name) for name in PAGES}
    serve(site, pages)
    first = crawler.run("-s", "CHANGEWATCH_WORKERS=1", *PLUGINS)
    assert first.returncode == 0 and first.records == [], first.stderr[-2000:]

    serve(site, {"b": pages["b"].replace(b"</body>", f"<p>{KILL_MARKER}</p></body>".encode())})
    killed = crawler.run("-s", "CHANGEWATCH_WORKERS=1", *PLUGINS)
    assert killed.returncode == 0, killed.stderr[-2000:]
    record = by_key(killed.records)["b"]
    assert record["kind"] == "error" and record["error"].startswith("unprocessable:"), record
    assert "died" in record["error"] or "signal" in record["error"]
    assert set(by_key(killed.records)) == {"b"}  # a and c were compared as usual: unchanged
    assert killed.stats.get("changewatch/commit/none") == 2
    assert killed.stats.get("changewatch/workers/crashed") == 1

    serve(site, {"b": pages["b"].replace(b"</body>", b"<p>One new sentence about the weather.</p></body>")})
    after = crawler.run("-s", "CHANGEWATCH_WORKERS=1", *PLUGINS)
    assert after.returncode == 0
    [change] = after.records
    assert change["key"] == "b" and change["kind"] == "content"  # against the baseline the crash kept
    assert "+ One new sentence about the weather." in change["diff"]


def test_a_page_that_takes_too_long_is_an_error_and_its_worker_is_replaced(
        tmp_path: Path, demo_site: tuple[DemoSite, str]) -> None:
    site, base = demo_site
    crawler = Crawler(tmp_path, watches(base))
    pages = {name: good_page(name) for name in PAGES}
    serve(site, pages)
    assert crawler.run("-s", "CHANGEWATCH_WORKERS=1").records == []

    # 6 MB of clock times and dates on one line (seconds of regular expressions, all of it
    # volatile), and 300,000 nested elements (past libxml2's depth limit: the slow tokenizer)
    slow = b"<html><body><p>" + b"12:34 2026-01-01 " * 350_000 + b"</p></body></html>"
    deep = b"<html><body>" + b"<div>" * 300_000 + b"deep" + b"</div>" * 300_000 + b"</body></html>"
    serve(site, {"b": slow, "c": deep})
    timed_out = crawler.run("-s", "CHANGEWATCH_WORKERS=1", "-s", "CHANGEWATCH_WORKER_TIMEOUT=0.5")
    assert timed_out.returncode == 0, timed_out.stderr[-2000:]
    records = by_key(timed_out.records)
    assert set(records) == {"b", "c"}
    for record in records.values():
        assert record["kind"] == "error" and record["error"].startswith("unprocessable:"), record
        assert "0.5" in record["error"]
    assert timed_out.stats.get("changewatch/workers/timeout") == 2
    assert timed_out.stats.get("changewatch/commit/none") == 1  # a replacement worker judged "a"

    serve(site, pages)
    back = crawler.run("-s", "CHANGEWATCH_WORKERS=1")
    assert back.returncode == 0, back.stderr[-2000:]
    # the baseline was kept: nothing changed, and one record closes each failure streak
    assert {k: r["kind"] for k, r in by_key(back.records).items()} == {"b": "recovered", "c": "recovered"}


def test_a_store_that_stops_taking_writes_stops_the_crawl_non_zero(
        tmp_path: Path, demo_site: tuple[DemoSite, str]) -> None:
    site, base = demo_site
    crawler = Crawler(tmp_path, watches(base))
    pages = {name: good_page(name) for name in PAGES}
    serve(site, pages)
    assert crawler.run().returncode == 0
    serve(site, {name: body.replace(b"</body>", b"<p>Edited.</p></body>") for name, body in pages.items()})

    failed = crawler.run("-s", 'EXTENSIONS={"tests.e2e.statsdump.StatsDump": 0, '
                               '"tests.e2e.plugins.StoreGoesReadOnly": 0}',
                         "-s", "TESTS_READONLY_AFTER=1", "-s", "CONCURRENT_REQUESTS=1")
    assert failed.returncode != 0, failed.stderr[-3000:]
    assert "changewatch: stopping the crawl: the store cannot be written" in failed.stderr
    assert failed.stderr.count("stopping the crawl") == 1  # once, not once per item
    assert len(failed.records) == 1  # the change committed before the store failed, and nothing else

    db = sqlite3.connect(tmp_path / "state.db")
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    db.close()
    store = SQLiteStore(tmp_path / "state.db")
    store.open()
    try:
        assert len(list(store.changes("watch"))) == 1
    finally:
        store.close()

    recovered = crawler.run()
    assert recovered.returncode == 0
    # the one change already logged is exported again (its feed was never confirmed), the two
    # that were never committed are found again: nothing lost, nothing twice in the log
    assert sorted(r["key"] for r in recovered.records) == ["a", "b", "c"]
    assert sum(1 for r in recovered.records if r.get("redelivery")) == 1


READ_ONLY = ("-s", 'EXTENSIONS={"tests.e2e.statsdump.StatsDump": 0, "tests.e2e.plugins.StoreGoesReadOnly": 0}',
             "-s", "CONCURRENT_REQUESTS=1")


def test_a_store_that_takes_no_writes_at_start_stops_the_crawl_non_zero(
        tmp_path: Path, demo_site: tuple[DemoSite, str]) -> None:
    """The first write of a run claims undelivered changes, before anything is fetched."""
    site, base = demo_site
    crawler = Crawler(tmp_path, watches(base))
    serve(site, {name: good_page(name) for name in PAGES})
    assert crawler.run().returncode == 0
    failed = crawler.run(*READ_ONLY, "-s", "TESTS_READONLY_AFTER=0")
    assert failed.returncode != 0, failed.stderr[-3000:]
    assert failed.stderr.count("changewatch: stopping the crawl: the store cannot be written") == 1
    assert "Traceback" not in failed.stderr, failed.stderr[-3000:]
    assert failed.records == [] and "changewatch/commit/none" not in failed.stats


def test_a_store_that_cannot_confirm_the_exported_changes_stops_the_crawl_non_zero(
        tmp_path: Path, demo_site: tuple[DemoSite, str]) -> None:
    """The last write of a run confirms what its feeds exported: when it fails, the run failed
    (and the changes are exported again by the next run)."""
    site, base = demo_site
    crawler = Crawler(tmp_path, watches(base))
    pages = {name: good_page(name) for name in PAGES}
    serve(site, pages)
    assert crawler.run().returncode == 0
    serve(site, {name: body.replace(b"</body>", b"<p>Edited.</p></body>") for name, body in pages.items()})
    failed = crawler.run(*READ_ONLY, "-s", f"TESTS_READONLY_AFTER={len(PAGES)}")
    assert len(failed.records) == len(PAGES)
    assert failed.returncode != 0, failed.stderr[-3000:]
    assert failed.stderr.count("changewatch: stopping the crawl: the store cannot be written") == 1
    assert "Traceback" not in failed.stderr, failed.stderr[-3000:]
    again = crawler.run()
    assert again.returncode == 0 and sorted(r["key"] for r in again.records if r.get("redelivery")) == list(PAGES)


def test_hostile_pages_are_judged_in_bounded_time_and_stay_quiet_when_unchanged(
        tmp_path: Path, demo_site: tuple[DemoSite, str]) -> None:
    """Hostile pages (huge, deep, binary, mis-declared), among good pages, on the default parser
    path: each is judged well within a per-page budget (no worker timeout), binary served as text/html is an error, and
    none reports a change when it has not changed."""
    site, base = demo_site
    hostile = {
        "one-line": b"<html><body><p>" + b"word " * 1_800_000 + b"</p></body></html>",  # 9 MB, one line
        "nested": b"<html><body>" + b"<div>" * 100_000 + b"deep" + b"</div>" * 100_000 + b"</body></html>",
        "scripted": (b"<html><body><p>Some text.</p><script>" + b"var x = 1; // comment\n" * 300_000
                     + b"</script><p>More text.</p></body></html>"),  # 95% inline script
        "paragraphs": b"<html><body>" + b"<p>a short paragraph</p>" * 200_000 + b"</body></html>",
        "binary": b"\x89\x00\x01\x02" * 250_000,
    }
    names = list(PAGES) + list(hostile)
    crawler = Crawler(tmp_path, [{"url": f"{base}/{name}", "key": name} for name in names])
    serve(site, {**{name: good_page(name) for name in PAGES}, **hostile})
    budget = ("-s", "CHANGEWATCH_WORKER_TIMEOUT=20")

    first = crawler.run(*budget)
    assert first.returncode == 0, first.stderr[-2000:]
    records = by_key(first.records)
    assert set(records) == {"binary"} and records["binary"]["error"].startswith("unsupported: binary"), records
    assert "changewatch/workers/timeout" not in first.stats
    assert first.stats.get("changewatch/commit/baseline") == len(names) - 1

    again = crawler.run(*budget)
    assert again.returncode == 0 and "changewatch/workers/timeout" not in again.stats
    assert [r["key"] for r in again.records] in ([], ["binary"]), again.records  # a repeated error, or none
    assert again.stats.get("changewatch/commit/none") == len(names) - 1
