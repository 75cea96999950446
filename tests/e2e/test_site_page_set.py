"""A site watch's page set kept as rows of the store, with real crawls, on both stores: a set of
thousands of pages compared across runs (pages added and removed reported exactly, nothing else),
and crawls killed at random moments between the sitemap's download and the set's commit, after
which the rows and the change log still say the same thing."""

from __future__ import annotations

import random
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from changewatch.demo.serving import ServedSite
from changewatch.store import PageSetStore, store_from_uri

from ..store.conftest import store_uri_of
from .crawl import Crawler, scrapy_env

pytestmark = pytest.mark.slow


class ManyPages(ServedSite):
    """A site of small numbered pages, all listed in one sitemap; a page not listed answers 404."""

    def __init__(self, pages: range):
        self.listed = set(pages)
        self.base = ""

    def url(self, i: int) -> str:
        return f"{self.base}/p/{i}"

    def respond_to(self, path: str, headers: dict[str, str]) -> tuple[int, str, bytes]:
        if path == "/sitemap.xml":
            rows = "".join(f"<url><loc>{self.url(i)}</loc><lastmod>2026-01-01</lastmod></url>"
                           for i in sorted(self.listed))
            return 200, "application/xml", (f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/'
                                            f'sitemap/0.9">{rows}</urlset>').encode()
        if path.startswith("/p/") and int(path[3:]) in self.listed:
            return 200, "text/html", f"<html><body><main><h1>Page {path[3:]}</h1></main></body></html>".encode()
        return 404, "text/plain", b"not found"


@pytest.fixture(params=["sqlite", "postgresql"])
def store_uri(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    yield from store_uri_of(request.param, tmp_path)


def served(pages: range) -> Iterator[ManyPages]:
    site = ManyPages(pages)
    site.base = site.start()
    try:
        yield site
    finally:
        site.stop()


def stored_pages(uri: str) -> list[str]:
    store = store_from_uri(uri)
    store.open()
    try:
        assert isinstance(store, PageSetStore)
        out, after = [], ""
        while rows := store.site_pages("watch", "big", after, 1000):
            out.extend(url for url, _ in rows)
            after = rows[-1][0]
        return out
    finally:
        store.close()


def logged_sets(uri: str) -> list[dict[str, Any]]:
    """The page set's records in the change log, oldest first (delivered or not)."""
    store = store_from_uri(uri)
    store.open()
    try:
        return [change.record for change in store.changes("watch") if change.key == "big"]
    finally:
        store.close()


def crawler_for(tmp_path: Path, site: ManyPages, uri: str) -> Crawler:
    return Crawler(tmp_path, [{"key": "big", "site": {"sitemap": f"{site.base}/sitemap.xml", "max_pages": 100_000}}],
                   store=uri)


#: more pages than one batch of stored rows (1,000): the set is merged with its rows batch by batch
PAGES = 1400


def test_thousands_of_pages_compared_across_runs(tmp_path: Path, store_uri: str) -> None:
    for site in served(range(PAGES)):
        crawler = crawler_for(tmp_path, site, store_uri)
        first = crawler.run("-s", "ROBOTSTXT_OBEY=False")
        assert first.returncode == 0 and first.records == [], first.stderr[-3000:]  # a silent baseline
        assert stored_pages(store_uri) == sorted(site.url(i) for i in range(PAGES))
        gone, new = set(range(100, 140)), set(range(PAGES, PAGES + 60))
        site.listed = (site.listed - gone) | new
        second = crawler.run("-s", "ROBOTSTXT_OBEY=False")
        assert second.returncode == 0, second.stderr[-3000:]
        sets = [r for r in second.records if r["key"] == "big"]
        assert len(sets) == 1 and sets[0]["kind"] == "entities", second.records[:5]
        assert sorted(e["url"] for e in sets[0]["added"]) == sorted(site.url(i) for i in new)
        assert sorted(e["url"] for e in sets[0]["removed"]) == sorted(site.url(i) for i in gone)
        assert [r for r in second.records if r["key"] != "big"] == []  # added pages' baselines are silent
        assert stored_pages(store_uri) == sorted(site.url(i) for i in site.listed)
        third = crawler.run("-s", "ROBOTSTXT_OBEY=False")
        assert third.returncode == 0 and third.records == [], third.records[:5]


def test_a_kill_at_any_moment_leaves_the_set_and_its_record_together(tmp_path: Path, store_uri: str) -> None:
    """Each attempt changes the site, then kills its crawl at a random moment: afterwards the rows
    are the last set the change log reports (its records replayed from the baseline), never a set
    no record reports nor a record whose set was lost; a last crawl, let finish, agrees."""
    rng = random.Random(20261205)
    for site in served(range(400)):
        crawler = crawler_for(tmp_path, site, store_uri)
        started = time.monotonic()
        assert crawler.run("-s", "ROBOTSTXT_OBEY=False").returncode == 0
        duration = time.monotonic() - started
        for attempt in range(6):
            site.listed = (site.listed - {rng.choice(sorted(site.listed))}) | {1000 + attempt}
            cmd, _ = crawler.command("-s", "ROBOTSTXT_OBEY=False")
            proc = subprocess.Popen(cmd, cwd=tmp_path, env=scrapy_env(), stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
            time.sleep(rng.uniform(0.3, duration))
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
            proc.wait(60)
            assert stored_pages(store_uri) == replayed(site, logged_sets(store_uri))
        assert crawler.run("-s", "ROBOTSTXT_OBEY=False").returncode == 0
        assert stored_pages(store_uri) == replayed(site, logged_sets(store_uri)) == sorted(
            site.url(i) for i in site.listed)


def replayed(site: ManyPages, records: list[dict[str, Any]]) -> list[str]:
    pages = {site.url(i) for i in range(400)}
    for record in records:
        assert record["kind"] == "entities", record
        added = {e["url"] for e in record.get("added", [])}
        removed = {e["url"] for e in record.get("removed", [])}
        assert not added & pages and removed <= pages, record  # nothing added twice, nothing removed unseen
        pages = (pages - removed) | added
    return sorted(pages)


def test_another_max_pages_starts_the_set_afresh_silently(tmp_path: Path) -> None:
    """Pages a lower max_pages leaves out are not removed, those a higher one lets in not added;
    with the same max_pages, a page gone from the sitemap is removed and the first page left out
    takes its place (added)."""
    for site in served(range(300)):
        uri = f"sqlite:///{tmp_path / 'state.db'}"
        crawler = crawler_for(tmp_path, site, uri)
        in_order = sorted(site.url(i) for i in range(300))
        assert run(crawler, site, 200) == [] and stored_pages(uri) == in_order[:200]
        assert run(crawler, site, 100) == [] and stored_pages(uri) == in_order[:100]
        assert run(crawler, site, 300) == [] and stored_pages(uri) == in_order
        assert run(crawler, site, 100) == [] and stored_pages(uri) == in_order[:100]
        gone = in_order[5]
        site.listed.discard(int(gone.rsplit("/", 1)[1]))
        [record] = run(crawler, site, 100)
        assert [e["url"] for e in record["removed"]] == [gone]
        assert [e["url"] for e in record["added"]] == [in_order[100]]
        assert stored_pages(uri) == sorted(set(in_order[:101]) - {gone})


def run(crawler: Crawler, site: ManyPages, max_pages: int) -> list[dict[str, Any]]:
    """A crawl of *site* watched with *max_pages*: the page set's records."""
    crawler.write_watchlist([{"key": "big", "site": {"sitemap": f"{site.base}/sitemap.xml", "max_pages": max_pages}}])
    result = crawler.run("-s", "ROBOTSTXT_OBEY=False")
    assert result.returncode == 0, result.stderr[-3000:]
    return [r for r in result.records if r["key"] == "big"]
