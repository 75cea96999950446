"""At-least-once delivery: a change committed but never confirmed as exported is exported again."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from changewatch.core.comparisons import Kind
from changewatch.store import Lease, Outcome
from changewatch.store.sqlite import SQLiteStore

from ..middlewares.conditional.servers import OddServer, Page
from ..middlewares.conditional.test_odd_servers import html
from ..store.conftest import store_uri_of
from .crawl import Crawler, scrapy_env

KILL_AFTER_COMMIT = ("-s", "TESTS_KILL_KEY=p",
                     "-s", 'ITEM_PIPELINES={"tests.middlewares.conditional.helpers.KillOnKey": 800}')


def test_a_change_whose_export_was_killed_is_exported_again(odd_server: tuple[OddServer, str],
                                                            tmp_path: Path) -> None:
    server, base = odd_server
    server.pages.update({"/p": Page(html("price 10")), "/q": Page(html("quiet"))})
    crawler = Crawler(tmp_path, [{"url": base + "/p", "key": "p"}, {"url": base + "/q", "key": "q"}])
    assert crawler.run().returncode == 0
    server.pages["/p"] = Page(html("price 12"))
    killed = crawler.run(*KILL_AFTER_COMMIT)
    assert killed.returncode == -9  # the change is in the store's log; the feed never closed

    again = crawler.run()
    assert again.returncode == 0, again.stderr
    [record] = again.records
    assert record["key"] == "p" and record["redelivery"] is True and "+ price 12" in record["diff"]
    assert isinstance(record["change_id"], int)
    assert again.stats["changewatch/delivery/redelivered"] == 1
    assert again.stats["changewatch/delivery/confirmed"] == 1
    assert again.stats["changewatch/commit/none"] == 2  # the page itself was not reported twice

    quiet = crawler.run()
    assert quiet.records == [] and "changewatch/delivery/redelivered" not in quiet.stats


def test_a_run_that_closes_its_feed_confirms_its_changes(odd_server: tuple[OddServer, str], tmp_path: Path) -> None:
    server, base = odd_server
    server.pages["/p"] = Page(html("one"))
    crawler = Crawler(tmp_path, [{"url": base + "/p", "key": "p"}])
    crawler.run()
    server.pages["/p"] = Page(html("two"))
    changed = crawler.run()
    [record] = changed.records
    assert "redelivery" not in record and changed.stats["changewatch/delivery/confirmed"] == 1
    # delivery means a feed: a run without one confirms nothing, says so, and the next run with a
    # feed exports the change (a change is not lost for want of a feed)
    server.pages["/p"] = Page(html("three"))
    no_feed = crawler.run(feed_option=False)
    assert "changewatch/delivery/confirmed" not in no_feed.stats
    assert no_feed.stats["changewatch/delivery/no_feed"] == 1
    assert "this run has no feed" in no_feed.stderr and "1 change(s) stay undelivered" in no_feed.stderr
    still_no_feed = crawler.run(feed_option=False)  # nothing would carry it: not exported again here
    assert "changewatch/delivery/redelivered" not in still_no_feed.stats
    later = crawler.run()
    [again] = later.records
    assert again["redelivery"] is True and again["key"] == "p" and later.stats["changewatch/delivery/confirmed"] == 1
    assert crawler.run().records == []


def test_a_feed_that_fails_to_store_leaves_its_changes_for_the_next_run(odd_server: tuple[OddServer, str],
                                                                       tmp_path: Path) -> None:
    server, base = odd_server
    server.pages["/p"] = Page(html("one"))
    crawler = Crawler(tmp_path, [{"url": base + "/p", "key": "p"}])
    crawler.run()
    server.pages["/p"] = Page(html("two"))
    # an FTP feed whose upload cannot connect: Scrapy stores it at close, fails, and counts it
    dead_ftp = 'FEEDS={"ftp://user:pw@127.0.0.1:1/changes.jsonl": {"format": "jsonlines"}}'
    failed = crawler.run("-s", dead_ftp, feed_option=False)
    assert failed.stats["feedexport/failed_count/FTPFeedStorage"] == 1
    assert failed.stats["changewatch/delivery/unconfirmed"] == 1
    assert "changewatch/delivery/confirmed" not in failed.stats
    again = crawler.run()
    [record] = again.records
    assert record["redelivery"] is True and "+ two" in record["diff"]
    assert again.stats["changewatch/delivery/confirmed"] == 1


def test_scrapy_check_leaves_undelivered_changes_for_the_next_crawl(tmp_path: Path) -> None:
    """`scrapy check` discards what a crawl yields: a change it redelivered would be confirmed
    without reaching any feed, and the next real crawl would never export it."""
    store = SQLiteStore(tmp_path / "state.db")
    store.open()
    record = {"key": "LMP-001", "kind": "field", "changes": {"price": {"old": "1", "new": "2"}}}
    dead = Lease("elsewhere:-:1:1:dead", 0.001)  # its owner is gone: the next run takes it at once
    store.commit("catalogue", "LMP-001", None, Outcome(Kind.FIELD, "http://x.example/p", "2026-11-30T12:00:00Z",
                                                       snapshot=None, record=record), lease=dead)
    store.close()
    proc = subprocess.run([sys.executable, "-m", "scrapy", "check", "catalogue",
                           "-s", f"CHANGEWATCH_STORE=sqlite:///{tmp_path / 'state.db'}"],
                          cwd=tmp_path, env=scrapy_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "OK" in proc.stderr, proc.stderr[-3000:]
    store.open()
    try:
        assert [c.key for c in store.undelivered("catalogue")] == ["LMP-001"]
    finally:
        store.close()


@pytest.fixture(params=["sqlite", "postgresql"])
def store_uri(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    yield from store_uri_of(request.param, tmp_path)


def test_a_redelivered_record_keeps_the_member_order_of_its_first_export(
        odd_server: tuple[OddServer, str], tmp_path: Path, store_uri: str) -> None:
    """The first export went to a local file, but another feed of that run failed, so the change
    stays undelivered; the next run's redelivery has its members in the order the first export
    had them (not sorted by the store), on SQLite and on PostgreSQL."""
    server, base = odd_server
    page = "<html><body><main><h1>{}</h1><p class='z'>{}</p><p>A kettle that boils water.</p></main></body></html>"
    server.pages["/p"] = Page(page.format("Kettle", "89").encode())
    watch = {"url": base + "/p", "key": "p", "fields": {"zprice": "p.z::text", "aname": "h1::text"}}
    crawler = Crawler(tmp_path, [watch], store=store_uri)
    assert crawler.run().returncode == 0
    server.pages["/p"] = Page(page.format("Kettle Pro", "79").encode())
    first_file = tmp_path / "first.jsonl"
    feeds = json.dumps({str(first_file): {"format": "jsonlines"},
                        "ftp://user:pw@127.0.0.1:1/changes.jsonl": {"format": "jsonlines"}})
    failed = crawler.run("-s", f"FEEDS={feeds}", feed_option=False)
    assert failed.stats["changewatch/delivery/unconfirmed"] == 1, failed.stderr[-2000:]
    [first] = [json.loads(line) for line in first_file.read_text(encoding="utf-8").splitlines()]
    again = crawler.run()
    [record] = again.records
    assert list(first) != sorted(first)  # the export's own order, which a sorting store would lose
    assert record.pop("redelivery") is True and list(record) == list(first) and record == first
    assert list(record["changes"]) == list(first["changes"])
