"""End to end: the bad input a busy page can be, over real ``scrapy crawl watch`` runs with
confirmation on (the default) against a local server.

A live ticker whose every line is new on every load is told once as ``noisy:`` and never alerts
after; a redesign that removes a learned slot's anchors is one content change, and the slot is
learned again from the new design (the runs after it are quiet); ``-a calibrate=N`` on a page
that redirects somewhere else on every load (a random query, or /v1 and /v2 in turn) neither
crashes nor learns the page's stable text as noise; permanent redirects that vary per load are not
a move, and a real move is reported once, confirmed. (A confirmation that answers 429 or a
captcha: test_confirm.py; in a round of processes: test_distributed.py.)"""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from .crawl import Crawler
from .hostile import HostileSite, send
from .test_confirm import HEADLINES, STABLE, changed_lines

pytestmark = pytest.mark.slow

SYMBOLS = ("ACME BOLT CRUX DYNE EPIC FLUX GRID HALO IRIS JADE KILN LOOM MINT NOVA ONYX PIKE QUAY RUNE SAGE "
           "TIDE").split()


@dataclass
class Ticker:
    """A live ticker: every line (a quote, a headline) is new on every load; nothing stays."""

    loads: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def html(self, n: int) -> str:
        rng = random.Random(n * 7919 + 1)
        quotes = "".join(f"<li>{sym} {rng.uniform(10, 900):.2f} {rng.choice('+-')}{rng.uniform(0, 9):.2f}%</li>"
                         for sym in rng.sample(SYMBOLS, 8))
        wire = "".join(f"<p>{h}, {rng.randrange(2, 59)} seconds ago from desk {rng.randrange(100, 999)}</p>"
                       for h in rng.sample(HEADLINES, 6))
        return f"<html><head><title>Markets live</title></head><body><ul>{quotes}</ul>{wire}</body></html>"

    def __call__(self, h: BaseHTTPRequestHandler) -> None:
        with self.lock:
            n = self.loads
            self.loads += 1
        send(h, 200, self.html(n).encode())


def test_a_live_ticker_is_told_noisy_once_and_never_alerts(site: HostileSite, tmp_path: Path) -> None:
    ticker = Ticker()
    site.good["/ticker"] = ticker
    crawler = Crawler(tmp_path, [{"key": "ticker", "url": f"{site.base}/ticker"}])
    assert crawler.run().records == []
    runs = [crawler.run() for _ in range(6)]
    records = [r for run in runs for r in run.records]
    assert all(run.returncode == 0 for run in runs), [run.stderr[-2000:] for run in runs]
    assert [(r["kind"], r.get("error", "")[:7]) for r in records] == [("error", "noisy: ")], records
    assert sum(run.stats.get("changewatch/commit/noisy", 0) for run in runs) == 1


@dataclass
class Redesignable:
    """Stable text around a box of five headlines drawn from hundreds per load, between a heading
    and a "More stories" line (the slot's anchors) that a redesign renames."""

    heading: str = "Trending now"
    trailer: str = "More stories"
    stable: list[str] = field(default_factory=lambda: list(STABLE))
    loads: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def html(self, n: int) -> str:
        box = "".join(f"<li>{h}</li>" for h in random.Random(n * 31 + 7).sample(HEADLINES, 5))
        stable = "".join(f"<p>{line}</p>" for line in self.stable)
        return (f"<html><head><title>Library</title></head><body><main><h1>Town library</h1>{stable}</main>"
                f"<aside><h2>{self.heading}</h2><ul>{box}</ul><p>{self.trailer}</p></aside>"
                f"<footer>Contact the library</footer></body></html>")

    def __call__(self, h: BaseHTTPRequestHandler) -> None:
        with self.lock:
            n = self.loads
            self.loads += 1
        send(h, 200, self.html(n).encode())


def test_a_redesign_that_removes_a_slots_anchors_is_reported_once_then_relearned(site: HostileSite,
                                                                                 tmp_path: Path) -> None:
    page = Redesignable()
    site.good["/library"] = page
    crawler = Crawler(tmp_path, [{"key": "library", "url": f"{site.base}/library"}])
    assert crawler.run("-a", "calibrate=3").records == []
    assert [crawler.run().records for _ in range(3)] == [[], [], []]

    page.heading, page.trailer = "Most read this week", "See every story"
    redesign = crawler.run()
    assert [r["kind"] for r in redesign.records] == ["content"], redesign.records
    changed = changed_lines(redesign.records[0]["diff"])
    # the new heading and trailer are not always shown as added: a known defect, pinned by
    # tests/worlds/test_redesign.py (which headlines the loads draw decides it)
    assert "- Trending now" in changed and "- More stories" in changed, redesign.records[0]["diff"]
    after = [crawler.run() for _ in range(5)]
    assert [r.records for r in after] == [[]] * 5, [[x.get("diff") for x in r.records] for r in after]

    page.stable[1] = "Members may borrow up to twenty books at once."
    edit = crawler.run().records
    assert [r["kind"] for r in edit] == ["content"], edit
    assert changed_lines(edit[0]["diff"]) == [f"- {STABLE[1]}", f"+ {page.stable[1]}"], edit[0]["diff"]


def alternating(site: HostileSite, status: int = 302) -> None:
    hops = {"n": 0}

    def handler(h: BaseHTTPRequestHandler) -> None:
        hops["n"] += 1
        send(h, status, b"", headers={"Location": f"/library/v{1 + hops['n'] % 2}"})

    site.good["/library"] = handler


def alternating_permanent(site: HostileSite) -> None:
    alternating(site, 301)


def random_query(site: HostileSite) -> None:
    rng = random.Random(5)

    def handler(h: BaseHTTPRequestHandler) -> None:
        send(h, 302, b"", headers={"Location": f"/library/v1?x={rng.getrandbits(40):x}"})

    site.good["/library"] = handler


@pytest.mark.parametrize("redirects", [alternating, alternating_permanent, random_query],
                         ids=["v1-v2", "v1-v2-permanent", "random-query"])
def test_calibrating_a_page_that_redirects_differently_per_load(site: HostileSite, tmp_path: Path,
                                                                redirects: object) -> None:
    """Both targets serve the same busy page: calibration learns the box, not the stable text, and
    an edit of the stable text after it is reported."""
    page = Redesignable()
    site.good["/library/v1"] = site.good["/library/v2"] = page
    redirects(site)  # type: ignore[operator]
    crawler = Crawler(tmp_path, [{"key": "library", "url": f"{site.base}/library"}])
    assert crawler.run().records == []
    calibrated = crawler.run("-a", "calibrate=5")
    assert calibrated.returncode == 0 and calibrated.records == [], calibrated.stderr[-3000:]
    assert calibrated.stats["changewatch/calibration/loads"] == 5
    assert [crawler.run().records for _ in range(3)] == [[], [], []]

    page.stable[2] = "The reading room is on the third floor, above the cafe."
    edit = crawler.run().records
    assert [r["kind"] for r in edit] == ["content"], edit
    assert changed_lines(edit[0]["diff"]) == [f"- {STABLE[2]}", f"+ {page.stable[2]}"], edit[0]["diff"]
    assert edit[0]["confirmed"] is True


def test_a_move_is_confirmed_where_permanent_redirects_vary_per_load(site: HostileSite, tmp_path: Path) -> None:
    """A 301 to /v1 or /v2 in turn is where the page varies, not a move (each run confirms it, and
    the second load lands elsewhere); once every load is sent to /v3 the move is reported once."""
    page = Redesignable()
    for path in ("/library/v1", "/library/v2", "/library/v3"):
        site.good[path] = page
    alternating(site, 301)
    crawler = Crawler(tmp_path, [{"key": "library", "url": f"{site.base}/library"}])
    assert crawler.run().records == []
    flips = [crawler.run() for _ in range(3)]
    assert [r.records for r in flips] == [[], [], []], [r.records for r in flips]
    assert all(r.stats["changewatch/confirm/dropped"] == 1 for r in flips)

    site.good["/library"] = lambda h: send(h, 301, b"", headers={"Location": "/library/v3"})
    moved = crawler.run().records
    assert [(r["kind"], r["moved_to"], r["confirmed"]) for r in moved] == [
        ("moved", f"{site.base}/library/v3", True)], moved
    assert [crawler.run().records for _ in range(2)] == [[], []]
