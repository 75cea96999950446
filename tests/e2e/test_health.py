"""Watching the watcher, end to end: real crawls of a local site on simulated
days (tests.e2e.plugins.SimulatedClock dates each observation), the health check judging the
store's history at the end of each crawl, its records in the feed and the change log."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from changewatch.cli import main

from .crawl import Crawler, CrawlResult
from .hostile import HostileSite, page

#: day 0 of the simulation: far enough back that no simulated day is ahead of the store's clock
DAY0 = (datetime.now(UTC) - timedelta(days=40)).replace(hour=6, minute=0, second=0, microsecond=0)
HEALTH = ("-s", "CHANGEWATCH_HEALTH_RECENT=1d", "-s", "CHANGEWATCH_HEALTH_STALE_AFTER=3d",
          "-s", "CHANGEWATCH_HEALTH_BASELINE=4d", "-s", "CHANGEWATCH_HEALTH_MIN_OBSERVATIONS=4")
CAPTCHA = (b"<html><body><h1>One more step</h1><p>Please complete the CAPTCHA below to continue to the shop."
           b"</p></body></html>")


def article(name: str, version: int) -> bytes:
    body = "".join(f"<p>{name} paragraph {i} stays as it is.</p>" for i in range(8))
    return (f"<html><body><main><h1>{name}</h1><p>Edition {version}: today's figure is {version * 7}.</p>{body}"
            "</main></body></html>").encode()


def on_day(crawler: Crawler, day: int, status: int = 0) -> CrawlResult:
    """The crawl of *day*; *status* 1 for a day when every watch fails (README, "Exit statuses")."""
    at = (DAY0 + timedelta(days=day)).strftime("%Y-%m-%dT%H:%M:%SZ")
    result = crawler.run(*HEALTH, "-s", f"TESTS_NOW={at}",
                         "-s", 'ITEM_PIPELINES={"tests.e2e.plugins.SimulatedClock": 100}')
    assert result.returncode == status, result.stderr[-3000:]
    return result


def health(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if "health" in r]


def test_a_site_turning_into_a_captcha_page_warns_once_and_recovers(tmp_path: Path, site: HostileSite,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    crawler = Crawler(tmp_path, [{"url": f"{site.base}/a", "key": "a"}, {"url": f"{site.base}/b", "key": "b"}])
    name = site.base.removeprefix("http://")
    seen: dict[int, CrawlResult] = {}
    for day in range(8):
        if 3 <= day <= 6:
            site.good["/a"] = site.good["/b"] = page(CAPTCHA)
        else:
            site.good["/a"], site.good["/b"] = page(article("A", day)), page(article("B", day))
        seen[day] = on_day(crawler, day, status=1 if 3 <= day <= 6 else 0)  # block pages only: nothing observed
    # days 0-2: a baseline, then real changes; a new site never warns
    assert [health(seen[d].records) for d in range(3)] == [[], [], []]
    assert [r["kind"] for r in seen[1].records] == ["content", "content"]
    # day 3: each watch says it is blocked, once; days 3-4: too soon for the site to warn
    assert sorted(r["error"].split(":")[0] for r in seen[3].records) == ["blocked", "blocked"]
    assert seen[4].records == []
    # day 5: three days of nothing but captcha pages, after a site that changed: one warning
    (warning,) = seen[5].records
    assert warning["key"] == name and warning["url"] == f"http://{name}/" and warning["kind"] == "error"
    assert warning["error"].startswith(f"health: blocked: {name} answered block pages"), warning
    assert warning["health"]["condition"] == "stale" and warning["health"]["blocked"] == 6
    assert isinstance(warning["change_id"], int)
    assert seen[5].stats["changewatch/health/warned"] == 1 and seen[5].stats["changewatch/health/blocked"] == 1
    assert f"WARNING: changewatch: health: blocked: {name}" in seen[5].stderr
    # day 6: still blocked, nothing logged again (once per streak), the stat says it still holds
    assert seen[6].records == [] and seen[6].stats["changewatch/health/holding"] == 1
    assert "changewatch/health/warned" not in seen[6].stats
    # day 7: the pages are back: each watch recovers, and so does the site
    kinds = sorted((r["kind"], r["key"]) for r in seen[7].records)
    assert kinds == [("content", "a"), ("content", "b"), ("recovered", name)], seen[7].records
    (over,) = health(seen[7].records)
    assert over["health"]["recovered_from"] == warning["error"]
    assert seen[7].stats["changewatch/health/recovered"] == 1
    # listed by `changewatch changes` as any change, and confirmed delivered by the feed
    capsys.readouterr()
    assert main(["changes", "--store", crawler.store, "--key", name]) == 0
    listed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(e["kind"], e["record"]["change_id"], e["delivered"]) for e in listed] == [
        ("error", warning["change_id"], True), ("recovered", over["change_id"], True)]
    # and in the report, charted: the days of captcha pages are the blocked bars
    assert main(["report", "--store", crawler.store, "--since", "60d", "-o", str(tmp_path / "report.html")]) == 0
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert html.count('class="bar kind-blocked"') == 4 and "health: blocked: " in html


def test_canaries_that_do_not_behave_as_declared_warn(tmp_path: Path, site: HostileSite) -> None:
    crawler = Crawler(tmp_path, [
        {"url": f"{site.base}/live", "key": "live", "canary": {"expect": "change", "within": "2d"}},
        {"url": f"{site.base}/steady", "key": "steady", "canary": {"expect": "no_change", "within": "2d"}},
    ])
    seen: dict[int, CrawlResult] = {}
    for day in range(7):
        # live changes on days 0-2 and 6, and stops on days 3-5; steady changes once, on day 3
        site.good["/live"] = page(article("Live", day if day <= 2 or day == 6 else 2))
        site.good["/steady"] = page(article("Steady", 1 if day >= 3 else 0))
        seen[day] = on_day(crawler, day)
    assert [health(seen[d].records) for d in range(3)] == [[], [], []]
    (steady,) = health(seen[3].records)  # it changed: a canary that must not
    assert steady["error"].startswith("health: canary: watch 'steady' was expected not to change"), steady
    assert steady["health"]["condition"] == "canary:steady" and steady["key"] == site.base.removeprefix("http://")
    assert health(seen[4].records) == []
    (live,) = health(seen[5].records)  # three days without a change, two allowed
    assert live["error"].startswith("health: canary: watch 'live' was expected to change within 2d and has not")
    assert seen[5].stats["changewatch/health/canary"] == 2  # both hold on day 5
    over = {r["health"]["condition"]: r for r in health(seen[6].records)}
    assert set(over) == {"canary:live", "canary:steady"}  # live changed again; steady has not for 3 days
    assert all(r["kind"] == "recovered" for r in over.values())


def test_one_check_per_crawl_and_health_can_be_turned_off(tmp_path: Path, site: HostileSite) -> None:
    site.good["/a"] = page(article("A", 1))
    crawler = Crawler(tmp_path, [{"url": f"{site.base}/a", "key": "a"}])
    first = on_day(crawler, 0)
    assert first.stats["changewatch/health/checks"] == 1
    assert "changewatch/health/no_history" not in first.stats  # its own baseline is history already
    off = crawler.run("-s", "CHANGEWATCH_HEALTH_ENABLED=False")
    assert off.returncode == 0 and "changewatch/health/checks" not in off.stats
