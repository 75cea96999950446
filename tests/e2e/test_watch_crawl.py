"""End to end: real crawls of a noisy local site, several runs, one store."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
import yaml

from changewatch.demo.run import WATCHLIST
from changewatch.demo.site import DemoSite
from tests.changes import field

from .crawl import Crawler, by_key


def demo_watches(base: str) -> list[dict]:
    return yaml.safe_load(WATCHLIST.format(base=base))["watches"]


def test_only_real_changes_leave_the_crawl(demo_site: tuple[DemoSite, str], tmp_path: Path) -> None:
    site, base = demo_site
    crawler = Crawler(tmp_path, demo_watches(base))

    first = crawler.run()
    assert first.returncode == 0, first.stderr
    assert first.records == []  # the first observation is a silent baseline
    assert first.stats["changewatch/commit/baseline"] == 4

    for _ in range(2):  # every load differs (tokens, clocks, shuffles, tracking parameters): silence
        noisy = crawler.run()
        assert noisy.returncode == 0 and noisy.records == [], noisy.records
        assert noisy.stats.get("changewatch/commit/noise", 0) + noisy.stats.get("changewatch/commit/none", 0) == 4

    site.publish_changes()
    changed = crawler.run()
    assert changed.returncode == 0
    records = by_key(changed.records)
    assert set(records) == {"demo-kettle", "demo-terms", "demo-listings"}

    kettle = records["demo-kettle"]
    assert kettle["kind"] == "field"
    assert kettle["changes"] == {"offers.price": field("89.00", "79.00", "89", "79")}
    assert kettle["url"] == f"{base}/product/kettle"

    terms = records["demo-terms"]
    assert terms["kind"] == "content"
    assert "+ Clause 17. Refunds now take up to sixty days." in terms["diff"]
    assert "- Clause 17." in terms["diff"]
    diff_lines = terms["diff"].splitlines()
    assert sum(x.startswith("+ ") for x in diff_lines) == sum(x.startswith("- ") for x in diff_lines) == 1
    assert isinstance(terms["distance"], int)

    listings = records["demo-listings"]
    assert listings["kind"] == "entities"
    assert listings["added"] == [{"key": f"{base}/rent/21-canal-walk",
                                  "fields": {"title": "1-bed flat, Canal Walk", "rent": "£950 pcm"}}]
    assert "removed" not in listings and "changed" not in listings

    for record in changed.records:
        assert record["observed_at"].endswith("Z") and record["spider"] == "watch"
        assert record["previous_observed_at"] <= record["observed_at"]

    after = crawler.run()  # each change is reported once
    assert after.returncode == 0 and after.records == []


def test_errors_are_reported_and_keep_the_baseline(demo_site: tuple[DemoSite, str], tmp_path: Path) -> None:
    site, base = demo_site
    watches = [w for w in demo_watches(base) if w["key"] in ("demo-terms", "demo-kettle", "demo-listings")]
    crawler = Crawler(tmp_path, watches)
    assert crawler.run().records == []

    site.overrides["/terms"] = (200, "text/html", b"<html><body><h1>Access denied</h1>"
                                                  b"<p>Please verify you are human.</p></body></html>")
    site.overrides["/product/kettle"] = (503, "text/html", b"<h1>Service unavailable</h1>")
    site.overrides["/listings"] = (200, "text/html", b"<html><body><main><h1>Flats</h1><ul></ul></main></body></html>")
    blocked = crawler.run()
    assert blocked.returncode == 1  # every due watch ended in an error: not one page observed
    errors = by_key(blocked.records)
    assert {k: r["kind"] for k, r in errors.items()} == {"demo-terms": "error", "demo-kettle": "error",
                                                          "demo-listings": "error"}
    assert errors["demo-terms"]["error"].startswith("blocked:")
    assert errors["demo-kettle"]["error"].startswith("blocked: HTTP 503: the server is unavailable")
    assert "entities" in errors["demo-listings"]["error"]

    again = crawler.run()  # the same failures again: counted, not re-reported
    assert again.returncode == 1 and again.records == []
    assert again.stats["changewatch/commit/error_repeated"] == 3

    site.overrides.clear()
    site.publish_changes()
    recovered = by_key(crawler.run().records)
    # compared with the last good observation, not with the error pages
    assert recovered["demo-kettle"]["changes"] == {"offers.price": field("89.00", "79.00", "89", "79")}
    assert recovered["demo-terms"]["kind"] == "content"
    assert [a["key"] for a in recovered["demo-listings"]["added"]] == [f"{base}/rent/21-canal-walk"]


def test_timeouts_and_dead_hosts_are_errors_that_do_not_stop_the_run(demo_site: tuple[DemoSite, str],
                                                                      tmp_path: Path) -> None:
    site, base = demo_site
    with socket.socket() as s:  # a port with nobody listening
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/page"
    site.delays["/news"] = 5
    crawler = Crawler(tmp_path, [{"url": f"{base}/news", "key": "slow"}, {"url": dead, "key": "dead"},
                                 {"url": f"{base}/terms", "key": "fine"}])
    result = crawler.run("-s", "DOWNLOAD_TIMEOUT=1", "-s", "RETRY_TIMES=0", "-s", "ROBOTSTXT_OBEY=False")
    assert result.returncode == 0, result.stderr[-2000:]
    errors = by_key(result.records)
    assert set(errors) == {"slow", "dead"}  # the good page is a silent baseline beside them
    assert errors["slow"]["error"].startswith("timeout:")
    assert errors["dead"]["error"].startswith("connection:")
    assert result.stats["changewatch/commit/baseline"] == 1


def test_a_bad_watchlist_fails_at_start(demo_site: tuple[DemoSite, str], tmp_path: Path) -> None:
    _, base = demo_site
    crawler = Crawler(tmp_path, [{"url": f"{base}/terms", "key": "t"},
                                 {"url": f"{base}/news", "key": "n", "fields": {"x": "p[[["}}])
    result = crawler.run()
    assert result.returncode != 0
    assert "watch #2 (n): fields.x: invalid CSS selector 'p[[['" in result.stderr
    assert not (tmp_path / "state.db").exists()  # nothing was fetched or stored


@pytest.mark.parametrize("setting", ["CHANGEWATCH_STORE_SYNCHRONOUS=SOMETIMES", "CHANGEWATCH_THRESHOLD=99",
                                     "CHANGEWATCH_CONDITIONAL_FULL_FETCH_RUNS=-1",
                                     # a typo, and a setting removed before the first release
                                     "CHANGEWATCH_THRESHOLD_X=3", "CHANGEWATCH_SUMMARY_ENABLED=False"])
def test_a_bad_setting_stops_the_crawl(demo_site: tuple[DemoSite, str], tmp_path: Path, setting: str) -> None:
    """Not a warning and a crawl without its store: observations would leak into the feed."""
    _, base = demo_site
    result = Crawler(tmp_path, [{"url": f"{base}/terms", "key": "t"}]).run("-s", setting)
    assert result.returncode == 1
    assert f"ERROR: changewatch cannot start: {setting.split('=')[0]}" in result.stderr.splitlines()[-1]
    assert "Traceback" not in result.stderr  # one line, in this checkout as in any project
    assert result.records == []


@pytest.mark.parametrize("setting", ["CHANGEWATCH_STORE=bogus://x", "CHANGEWATCH_THRESHOLD=99"])
def test_a_bad_setting_is_said_in_the_crawl_log(demo_site: tuple[DemoSite, str], tmp_path: Path, setting: str) -> None:
    """With LOG_FILE (as Scrapyd runs every job), the log says why the crawl never started: the
    traceback on stderr is not in it, and a job log that ends after Scrapy's banner says nothing."""
    _, base = demo_site
    log = tmp_path / "crawl.log"
    result = Crawler(tmp_path, [{"url": f"{base}/terms", "key": "t"}]).run("-s", setting, "-s", f"LOG_FILE={log}")
    assert result.returncode == 1 and result.records == []
    errors = [line for line in log.read_text(encoding="utf-8").splitlines() if "ERROR" in line]
    # the store's scheme is the store's to check, when the crawl builds it: one line all the same
    assert f"ERROR: changewatch cannot start: {setting.split('=')[0]} = " in errors[0], errors
    assert errors[1:] == [], errors


def test_a_foreign_store_is_refused_and_left_alone(demo_site: tuple[DemoSite, str], tmp_path: Path) -> None:
    _, base = demo_site
    store = tmp_path / "notes.txt"
    store.write_text("my precious notes")
    crawler = Crawler(tmp_path, [{"url": f"{base}/terms"}], store=f"sqlite:///{store}")
    result = crawler.run()
    assert result.returncode != 0
    assert "is not a changewatch store" in result.stderr
    assert store.read_text() == "my precious notes"


def test_an_unwritable_store_location_fails_clearly(demo_site: tuple[DemoSite, str], tmp_path: Path) -> None:
    _, base = demo_site
    crawler = Crawler(tmp_path, [{"url": f"{base}/terms"}], store="sqlite:////proc/self/cw/state.db")
    result = crawler.run()
    assert result.returncode != 0
    assert "cannot create the store's directory /proc/self/cw" in result.stderr


def test_feed_routing_by_kind(demo_site: tuple[DemoSite, str], tmp_path: Path) -> None:
    """The documented FEEDS item_filter routes change kinds to separate feeds."""
    site, base = demo_site
    crawler = Crawler(tmp_path, [w for w in demo_watches(base) if w["key"] in ("demo-kettle", "demo-terms")])
    crawler.run()
    site.publish_changes()
    site.overrides["/terms"] = (500, "text/html", b"oops")
    feeds = {
        str(tmp_path / "fields.jsonl"): {"format": "jsonlines", "item_filter": "changewatch.feeds.KindFilter",
                                         "item_filter_kinds": ["field", "entities"]},
        str(tmp_path / "errors.jsonl"): {"format": "jsonlines", "item_filter": "changewatch.feeds.KindFilter",
                                         "item_filter_kinds": ["error"]},
    }
    result = crawler.run("-s", f"FEEDS={json.dumps(feeds)}", feed_option=False)
    assert result.returncode == 0, result.stderr
    fields = [json.loads(x) for x in (tmp_path / "fields.jsonl").read_text().splitlines()]
    errors = [json.loads(x) for x in (tmp_path / "errors.jsonl").read_text().splitlines()]
    assert [r["kind"] for r in fields] == ["field"] and [r["kind"] for r in errors] == ["error"]
