"""End to end: a page whose words change only in case is a content change, shown as written,
and a page that does not change stays quiet across runs."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from .crawl import Crawler, by_key
from .hostile import HostileSite, page

BODY = ("<html><head><title>{name}</title></head><body><header>Updated {clock}</header><main>"
        "<h1>{name} 3.0 released</h1><p>{name} parses JSON at gigabytes per second.</p>"
        "<p>Download it today!</p></main></body></html>")


def serve(site: HostileSite, name: str, ago: str) -> None:
    # a clock in its own zone showing the time of the fetch (seconds from now), and a relative time
    clock = f"{ago} · {datetime.now(UTC):%H:%M} UTC"
    site.good["/release"] = page(BODY.format(name=name, clock=clock).encode())
    site.good["/steady"] = page(BODY.format(name="Steady", clock=clock).encode())


def test_a_change_of_case_only_is_one_content_change_with_both_spellings(site: HostileSite,
                                                                         tmp_path: Path) -> None:
    crawler = Crawler(tmp_path, [{"key": "release", "url": f"{site.base}/release"},
                                 {"key": "steady", "url": f"{site.base}/steady"}])
    serve(site, "simdjson", "3 minutes ago")
    first = crawler.run()
    assert first.returncode == 0 and first.records == [], first.stderr[-3000:]

    serve(site, "SIMDJSON", "8 minutes ago")  # the clock moves on every page: noise, never a change
    second = crawler.run()
    assert second.returncode == 0, second.stderr[-3000:]
    records = by_key(second.records)
    assert set(records) == {"release"}
    record = records["release"]
    assert record["kind"] == "content"
    assert "- simdjson parses JSON at gigabytes per second." in record["diff"]
    assert "+ SIMDJSON parses JSON at gigabytes per second." in record["diff"]
    assert "- simdjson 3.0 released" in record["diff"] and "+ SIMDJSON 3.0 released" in record["diff"]

    third = crawler.run()
    assert third.returncode == 0 and third.records == [], third.stderr[-3000:]
