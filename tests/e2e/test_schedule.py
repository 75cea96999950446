"""End to end: real crawls at simulated times (tests.e2e.statsdump.SimulatedClock) of a local site:
watches with ``every`` are skipped until due and fetched by ``-a force=1``; a skipped watch is not
a missing page (its error streak, validators and deliveries are as they were); the adaptive
schedule over simulated days; per-site spiders; clock skew; a store with no history."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

from changewatch.core.schedule import epoch
from changewatch.examples.site import FixtureSite
from tests.changes import field

from .crawl import Crawler, SpiderCrawler, by_key
from .hostile import HostileSite, good_page, page

#: what a 404 says after its status
NOT_FOUND = "the server has no page at this URL (Not Found)"
#: simulated time starts 60 days ago: fetch times in the past are never clamped by the store
BASE = datetime.now(UTC).replace(microsecond=0) - timedelta(days=60)


def at(hours: float) -> tuple[str, str]:
    """The crawl arguments that run it *hours* after BASE."""
    return "-s", f"TESTS_NOW={(BASE + timedelta(hours=hours)).isoformat()}"


def rows(crawler: Crawler) -> dict[str, tuple[str | None, str | None, float | None]]:
    """key → (last_seen, due_at, due_interval), read from the store."""
    db = sqlite3.connect(crawler.store.removeprefix("sqlite:///"))
    try:
        return {key: (seen, due, interval) for key, seen, due, interval in
                db.execute("SELECT key, last_seen, due_at, due_interval FROM observations")}
    finally:
        db.close()


def test_every_skips_until_due_and_force_fetches_anyway(site: HostileSite, tmp_path: Path) -> None:
    site.good["/a"] = page(good_page("a"))
    site.good["/b"] = page(good_page("b"))
    crawler = Crawler(tmp_path, [{"url": f"{site.base}/a", "key": "a", "every": "6h"},
                                 {"url": f"{site.base}/b", "key": "b"}])
    first = crawler.run(*at(0))
    assert first.returncode == 0 and first.records == [], first.stderr[-2000:]
    assert first.stats["changewatch/commit/baseline"] == 2 and first.stats["changewatch/schedule/due"] == 1
    assert "changewatch/schedule/skipped" not in first.stats  # a store with no history: all due

    second = crawler.run(*at(1))  # a is not due for 5 more hours; b has no schedule: fetched
    assert second.returncode == 0 and second.records == []
    assert second.stats["changewatch/schedule/skipped"] == 1 and "changewatch/schedule/due" not in second.stats
    assert (site.hits["/a"], site.hits["/b"]) == (2, 3)  # a first crawl loads each page twice (its baseline)
    assert second.stats["changewatch/commit/none"] + second.stats.get("changewatch/commit/noise", 0) == 1
    assert "1 not due, skipped" in second.stderr

    site.good["/a"] = page(good_page("a", paragraphs=13))  # a changed: a forced run finds it now
    forced = crawler.run(*at(1.5), "-a", "force=1")
    assert forced.returncode == 0
    assert [r["key"] for r in forced.records] == ["a"] and forced.records[0]["kind"] == "content"
    assert forced.stats["changewatch/schedule/forced"] == 1
    # the forced fetch and one more load that confirmed the change before it was reported
    assert forced.stats["changewatch/confirm/sent"] == 1 and site.hits["/a"] == 4

    early = crawler.run(*at(6.5))  # 5 h after the forced fetch: not due
    assert early.stats["changewatch/schedule/skipped"] == 1 and site.hits["/a"] == 4
    # due 6 h after its last fetch, from a tenth of the interval before: a run started 24 min early fetches it
    slack = crawler.run(*at(1.5 + 6 - 0.4))
    assert slack.stats["changewatch/schedule/due"] == 1 and site.hits["/a"] == 5
    late = crawler.run(*at(1.5 + 6 - 0.4 + 13))  # more than a whole interval late: overdue
    assert late.stats["changewatch/schedule/overdue"] == 1 and site.hits["/a"] == 6


def test_a_skipped_watch_is_not_a_missing_page(site: HostileSite, tmp_path: Path) -> None:
    site.good["/gone"] = page(b"<h1>Not found</h1>", 404)
    site.good["/tagged"] = page(good_page("tagged"), ETag='"v1"')
    crawler = Crawler(tmp_path, [{"url": f"{site.base}/gone", "key": "gone", "every": "6h"},
                                 {"url": f"{site.base}/tagged", "key": "tagged", "every": "6h"}])
    first = crawler.run(*at(0), "-s", "CHANGEWATCH_GONE_AFTER=2")
    assert [(r["key"], r["error"]) for r in first.records] == [("gone", f"http: HTTP 404: {NOT_FOUND}")]
    for hours in (1, 2, 3):  # skipped: neither a run that found the page missing nor one that found it
        skipped = crawler.run(*at(hours), "-s", "CHANGEWATCH_GONE_AFTER=2")
        assert skipped.returncode == 0 and skipped.records == [] and skipped.stats["changewatch/schedule/skipped"] == 2
    due = crawler.run(*at(7), "-s", "CHANGEWATCH_GONE_AFTER=2")
    # the second run that found it missing, not the fifth: and the validators were kept and sent
    gone = f"gone: HTTP 404 on 2 consecutive runs: {NOT_FOUND}"
    assert [(r["key"], r["error"]) for r in due.records] == [("gone", gone)]
    assert due.stats["changewatch/conditional/sent"] == 1
    assert (site.hits["/gone"], site.hits["/tagged"]) == (2, 3)  # /tagged's baseline: two loads


def test_a_change_found_while_others_are_skipped_is_delivered_once(site: HostileSite, tmp_path: Path) -> None:
    site.good["/a"] = page(good_page("a"))
    crawler = Crawler(tmp_path, [{"url": f"{site.base}/a", "key": "a", "every": "1h"}])
    assert crawler.run(*at(0)).records == []
    site.good["/a"] = page(good_page("a", paragraphs=20))
    unfed = crawler.run(*at(2), feed_option=False)  # found, but no feed: it stays undelivered
    assert unfed.stats["changewatch/commit/content"] == 1
    skipped = crawler.run(*at(2.5))  # the watch is not due: its pending change goes out all the same
    assert skipped.stats["changewatch/schedule/skipped"] == 1
    assert [(r["key"], r.get("redelivery")) for r in skipped.records] == [("a", True)]
    assert crawler.run(*at(2.6)).records == []


def test_the_adaptive_schedule_over_simulated_days(site: HostileSite, tmp_path: Path) -> None:
    """Two runs a day for eight simulated days: a page that changes every day is fetched about
    daily, one that never changes drifts to the longest interval, and skipped runs fetch neither."""
    def serve(day: int) -> None:
        site.good["/daily"] = page(good_page(f"daily news of day {day}"))
        site.good["/still"] = page(good_page("still"))

    crawler = Crawler(tmp_path, [{"url": f"{site.base}/daily", "key": "daily"},
                                 {"url": f"{site.base}/still", "key": "still"}])
    options = ("-s", "CHANGEWATCH_SCHEDULE_ENABLED=True", "-s", "CHANGEWATCH_SCHEDULE_MIN_INTERVAL=1h",
               "-s", "CHANGEWATCH_SCHEDULE_MAX_INTERVAL=3d")
    fetched: dict[str, list[float]] = {"daily": [], "still": []}
    for run in range(16):
        hours = 12.0 * run
        serve(int(hours // 24))
        before = {key: site.hits[f"/{key}"] for key in fetched}
        result = crawler.run(*at(hours), *options)
        assert result.returncode == 0, result.stderr[-2000:]
        for key in fetched:
            if site.hits[f"/{key}"] > before[key]:
                fetched[key].append(hours)
        assert result.stats.get("changewatch/schedule/due", 0) + result.stats.get("changewatch/schedule/skipped",
                                                                                  0) == 2
        assert {r["key"] for r in result.records} <= {"daily"}
    state = rows(crawler)
    assert state["still"][2] == 3 * 86400.0  # the longest interval
    assert len(fetched["still"]) <= 5, fetched
    assert state["daily"][2] is not None and state["daily"][2] <= 36 * 3600.0, state
    # the daily page after its first days: fetched on at least every other day, every change found
    assert len([h for h in fetched["daily"] if h >= 72]) >= 4, fetched
    assert len(fetched["daily"]) > len(fetched["still"])


def test_a_lowered_maximum_applies_at_the_next_start(site: HostileSite, tmp_path: Path) -> None:
    """Keys scheduled under the default 7 days are moved to a new 5-second maximum by the first
    run that has it, which says how many it moved; a watch's longer `every` gives way to it,
    said once; the next run moves nothing and says nothing more."""
    site.good["/a"] = page(good_page("a"))
    site.good["/b"] = page(good_page("b"))
    crawler = Crawler(tmp_path, [{"url": f"{site.base}/a", "key": "a"},
                                 {"url": f"{site.base}/b", "key": "b", "every": "6h"}])
    on = ("-s", "CHANGEWATCH_SCHEDULE_ENABLED=True")
    short = (*on, "-s", "CHANGEWATCH_SCHEDULE_MIN_INTERVAL=1s", "-s", "CHANGEWATCH_SCHEDULE_MAX_INTERVAL=5s")
    assert crawler.run(*at(0), *on).returncode == 0
    old = crawler.run(*at(0.01), *on)  # 36 s later, under the default bounds: neither is due
    assert old.returncode == 0 and old.stats["changewatch/schedule/skipped"] == 2, old.stderr[-2000:]
    assert "moved to the bounds" not in old.stderr
    due_before = rows(crawler)["a"][1]

    lowered = crawler.run(*at(0.02), *short)
    assert lowered.returncode == 0, lowered.stderr[-2000:]
    assert lowered.stats["changewatch/schedule/due"] == 2 and (site.hits["/a"], site.hits["/b"]) == (3, 3)
    assert lowered.stats["changewatch/schedule/rebounded"] == 2  # both had an estimate, under 7 days' bounds
    assert "changewatch: schedule: 2 key(s) moved to the bounds CHANGEWATCH_SCHEDULE_MIN_INTERVAL = 1s and " \
           "_MAX_INTERVAL = 5s" in lowered.stderr
    assert lowered.stderr.count("every 6h is longer than CHANGEWATCH_SCHEDULE_MAX_INTERVAL = 5s: the stricter " \
                                "wins") == 1
    seen, due, interval = rows(crawler)["a"]
    assert interval == 5.0 and epoch(due) == (epoch(seen) or 0) + 5 and due != due_before

    again = crawler.run(*at(0.03), *short)  # 36 s later: due again by the 5-second bound, nothing left to move
    assert again.returncode == 0 and again.stats["changewatch/schedule/due"] == 2
    assert "moved to the bounds" not in again.stderr and "changewatch/schedule/rebounded" not in again.stats


def test_clock_skew_never_pushes_a_key_ahead(site: HostileSite, tmp_path: Path) -> None:
    site.good["/a"] = page(good_page("a"))
    crawler = Crawler(tmp_path, [{"url": f"{site.base}/a", "key": "a"}])
    options = ("-s", "CHANGEWATCH_SCHEDULE_ENABLED=True", "-s", "CHANGEWATCH_SCHEDULE_MAX_INTERVAL=2d")
    future = (datetime.now(UTC) + timedelta(days=800)).isoformat()
    skewed = crawler.run("-s", f"TESTS_NOW={future}", *options)  # a machine two years ahead
    assert skewed.returncode == 0 and skewed.stats["changewatch/commit/clamped"] == 1
    seen, due, interval = rows(crawler)["a"]
    now = datetime.now(UTC).timestamp()
    assert seen is not None and due is not None and interval is not None
    assert abs((epoch(seen) or 0) - now) < 600  # stored at the store's time, not two years ahead
    assert (epoch(due) or 0) <= now + 2 * 86400 + 600
    # and a machine whose clock is two years behind the store's is not kept waiting for two years
    behind = (datetime.now(UTC) - timedelta(days=800)).isoformat()
    late = crawler.run("-s", f"TESTS_NOW={behind}", *options)
    assert late.stats["changewatch/schedule/due"] == 1


def test_a_per_site_spider_skips_products_not_due_and_always_fetches_its_categories(
        catalogue: tuple[FixtureSite, str], tmp_path: Path) -> None:
    site, base = catalogue
    crawler = SpiderCrawler(tmp_path, "catalogue", "-a", f"site={base}", "-s", "CHANGEWATCH_SCHEDULE_ENABLED=True")
    first = crawler.run(*at(0))
    assert first.returncode == 0 and first.stats["changewatch/commit/baseline"] == 9, first.stderr[-2000:]
    assert first.stats["changewatch/schedule/due"] == 6  # the products; category pages are never scheduled
    site.edit("/p/lmp-001.html", '"price": "129.00"', '"price": "119.00"')
    second = crawler.run(*at(1))  # the products are not due an hour later: only the categories are fetched
    assert second.returncode == 0 and second.records == []
    assert second.stats["changewatch/schedule/skipped"] == 6 and second.stats["changewatch/commit/none"] + \
        second.stats.get("changewatch/commit/noise", 0) == 3
    forced = crawler.run(*at(1.5), "-a", "force=1")
    assert by_key(forced.records)["LMP-001"]["changes"] == {"price": field("129.00", "119.00", "129", "119")}


def test_a_bad_force_stops_the_crawl(site: HostileSite, tmp_path: Path) -> None:
    site.good["/a"] = page(good_page("a"))
    crawler = Crawler(tmp_path, [{"url": f"{site.base}/a", "key": "a", "every": "1h"}])
    result = crawler.run("-a", "force=yes")
    assert result.returncode == 1
    assert "-a force='yes': expected 1 (fetch every watch, due or not) or 0 (also true, false)" in result.stderr
    assert site.hits["/a"] == 0
