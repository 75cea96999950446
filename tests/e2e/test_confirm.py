"""End to end: a change is confirmed by a second load before it is reported.

A page whose "trending" box draws five headlines from hundreds on every load stays quiet without
any calibration; an edit of its stable text is reported once, from the confirmation, with a diff
that shows only the edit. A confirmation that answers 429 or a captcha leaves the change reported
as one load showed it (``"confirmed": false``); ``confirm: false`` and the setting make one request
per change; sixty busy pages of ~200 KB at once do not deadlock the crawl; calibration loads are
never confirmed (a page that redirects differently per load)."""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from .crawl import Crawler
from .hostile import HostileSite, send

pytestmark = pytest.mark.slow

WORDS = ("harbour council tram river bakery school library market festival bridge garden museum station "
         "theatre orchard stadium clinic ferry tower square").split()
HEADLINES = [" ".join(random.Random(n).sample(WORDS, 5)).capitalize() + f" ({chr(65 + n % 26)})"
             for n in range(400)]
STABLE = ["The library is open to every resident of the town.",
          "Members may borrow up to twelve books at once.",
          "The reading room is on the second floor, above the cafe.",
          "Lost cards are replaced at the front desk."]


@dataclass
class BusyPage:
    """A page with a box of five headlines drawn from hundreds on every load, around stable text;
    *filler* paragraphs make it as long as a real page."""

    stable: list[str] = field(default_factory=lambda: list(STABLE))
    filler: int = 0
    loads: int = 0
    #: loads answered otherwise: load number → (status, body)
    answers: dict[int, tuple[int, bytes]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def html(self, n: int) -> str:
        box = "".join(f"<li>{h}</li>" for h in random.Random(n * 31 + 7).sample(HEADLINES, 5))
        stable = "".join(f"<p>{line}</p>" for line in self.stable)
        filler = "".join(f"<p>Archive note: {' '.join(random.Random(i).sample(WORDS, 14))}.</p>"
                         for i in range(self.filler))
        return (f"<html><head><title>Library</title></head><body><main><h1>Town library</h1>{stable}{filler}"
                f"</main><aside><h2>Trending now</h2><ul>{box}</ul><p>More stories</p></aside></body></html>")

    def __call__(self, h: BaseHTTPRequestHandler) -> None:
        with self.lock:
            n = self.loads
            self.loads += 1
        status, body = self.answers.get(n, (200, b""))
        send(h, status, body or self.html(n).encode())


CAPTCHA = b"<html><body><h1>Are you a robot?</h1><p>Please complete the captcha.</p></body></html>"


def busy(site: HostileSite, path: str = "/library", filler: int = 0) -> BusyPage:
    page = BusyPage(filler=filler)
    site.good[path] = page
    return page


def crawler_of(site: HostileSite, tmp_path: Path, **options: object) -> Crawler:
    return Crawler(tmp_path, [{"key": "library", "url": f"{site.base}/library", **options}])


def changed_lines(diff: str) -> list[str]:
    return [line for line in diff.split("\n") if line[:2] in ("- ", "+ ")]


def test_busy_page_is_quiet_and_an_edit_is_confirmed(site: HostileSite, tmp_path: Path) -> None:
    page = busy(site)
    crawler = crawler_of(site, tmp_path)
    first = crawler.run()
    # the baseline is two loads: the box, new on each, is where the page varies before any run
    assert first.records == [] and first.stats["changewatch/confirm/baseline"] == 1 and page.loads == 2
    quiet = [crawler.run() for _ in range(4)]
    assert [r.records for r in quiet] == [[], [], [], []], [r.records for r in quiet]
    assert all(r.stats.get("changewatch/confirm/held", 0) == 0 for r in quiet)
    assert sum(r.stats.get("changewatch/confirm/dropped", 0) for r in quiet) == \
        sum(r.stats.get("changewatch/confirm/sent", 0) for r in quiet)

    page.stable[1] = "Members may borrow up to twenty books at once."
    loads = page.loads
    edit = crawler.run()
    assert [r["kind"] for r in edit.records] == ["content"], edit.records
    record = edit.records[0]
    assert record["confirmed"] is True
    assert changed_lines(record["diff"]) == [f"- {STABLE[1]}", f"+ {page.stable[1]}"], record["diff"]
    assert page.loads == loads + 2 and edit.stats["changewatch/confirm/held"] == 1
    assert crawler.run().records == []  # reported once


@pytest.mark.parametrize("answer", [(429, b"<h1>Too many requests</h1>"), (200, CAPTCHA)], ids=["429", "captcha"])
def test_a_failed_confirmation_reports_the_candidate_unconfirmed(site: HostileSite, tmp_path: Path,
                                                                 answer: tuple[int, bytes]) -> None:
    page = busy(site)
    crawler = crawler_of(site, tmp_path)
    assert crawler.run().records == []
    page.stable[0] = "The library is closed for repairs until further notice."
    page.answers[page.loads + 1] = answer  # the confirmation's load
    result = crawler.run()
    assert [r["kind"] for r in result.records] == ["content"], result.stderr[-3000:]
    assert result.records[0]["confirmed"] is False
    assert f"+ {page.stable[0]}" in result.records[0]["diff"]
    assert result.stats["changewatch/confirm/failed"] == 1
    assert crawler.run().records == []  # committed: not reported again


@pytest.mark.parametrize("answer", [(429, b"<h1>Too many requests</h1>"), (200, CAPTCHA)], ids=["429", "captcha"])
def test_a_refused_second_load_of_a_baseline_keeps_the_first(site: HostileSite, tmp_path: Path,
                                                             answer: tuple[int, bytes]) -> None:
    page = busy(site)
    page.answers[1] = answer  # the baseline's second load
    crawler = crawler_of(site, tmp_path)
    first = crawler.run()
    assert first.returncode == 0 and first.records == [], first.stderr[-3000:]
    assert first.stats["changewatch/confirm/baseline"] == 1 and first.stats["changewatch/commit/baseline"] == 1
    # nothing was learned from it, and nothing is lost: the box is a candidate the confirmation drops
    quiet = crawler.run()
    assert quiet.records == [] and quiet.stats.get("changewatch/confirm/dropped", 0) == 1
    page.stable[0] = "The library is closed for repairs until further notice."
    edit = crawler.run()
    assert [r["kind"] for r in edit.records] == ["content"] and f"+ {page.stable[0]}" in edit.records[0]["diff"]


def test_confirm_false_and_the_setting_make_one_request(site: HostileSite, tmp_path: Path) -> None:
    page = busy(site)
    crawler = crawler_of(site, tmp_path, confirm=False)
    assert crawler.run().records == []
    loads = page.loads
    noisy = crawler.run()
    assert [r["kind"] for r in noisy.records] == ["content"] and "confirmed" not in noisy.records[0]
    assert page.loads == loads + 1 and "changewatch/confirm/sent" not in noisy.stats
    crawler.write_watchlist([{"key": "library", "url": f"{site.base}/library"}])
    off = crawler.run("-s", "CHANGEWATCH_CONFIRM_CHANGES=False")
    assert [r["kind"] for r in off.records] == ["content"] and page.loads == loads + 2


def test_many_busy_pages_at_once_do_not_deadlock(site: HostileSite, tmp_path: Path) -> None:
    pages = [busy(site, f"/p{i}", filler=1300) for i in range(60)]
    assert len(pages[0].html(0)) > 150_000
    crawler = Crawler(tmp_path, [{"key": f"p{i}", "url": f"{site.base}/p{i}"} for i in range(60)])
    first = crawler.run("-s", "CLOSESPIDER_TIMEOUT=240")  # 60 baselines of two loads each
    assert first.records == [] and first.stats["changewatch/confirm/baseline"] == 60, first.stderr[-3000:]
    for page in pages[:30]:
        page.stable[2] = "The reading room is on the third floor."
    result = crawler.run("-s", "CLOSESPIDER_TIMEOUT=240")
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stats.get("finish_reason") in (None, "finished"), result.stats
    # the 30 edited pages are candidates, each confirmed; the box of the others was learned at their baselines
    assert result.stats["changewatch/confirm/sent"] == 30 + result.stats.get("changewatch/confirm/dropped", 0)
    assert sorted(r["key"] for r in result.records) == sorted(f"p{i}" for i in range(30))
    assert all(r["confirmed"] is True for r in result.records)


def test_calibration_loads_are_never_confirmed(site: HostileSite, tmp_path: Path) -> None:
    """A page that redirects to another URL on every load: calibration loads only teach."""
    page = busy(site, "/library/v")
    hops = {"n": 0}

    def redirect(h: BaseHTTPRequestHandler) -> None:
        hops["n"] += 1
        send(h, 302, b"", headers={"Location": f"/library/v?load={hops['n']}"})

    site.good["/library"] = redirect
    crawler = crawler_of(site, tmp_path)
    assert crawler.run().records == []
    loads = page.loads
    second = crawler.run("-a", "calibrate=3")
    assert second.returncode == 0 and second.records == [], second.stderr[-3000:]
    # the box was learned at the baseline (two loads): a normal load it is new in may still be a
    # candidate, confirmed and dropped; the three calibration loads are never confirmed
    sent = second.stats.get("changewatch/confirm/sent", 0)
    assert sent == second.stats.get("changewatch/confirm/dropped", 0) <= 1
    assert second.stats["changewatch/calibration/loads"] == 3
    assert page.loads == loads + 4 + sent
