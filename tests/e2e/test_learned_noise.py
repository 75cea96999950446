"""End to end: learned noise over real ``scrapy crawl watch`` runs against a local
server whose page changes on every load: a rotating "trending now" box, a live counter, a
shuffled list, an ad slot, a block on half the loads, an A/B teaser, a block that moves, and
class names and ids generated per load. After ``-a calibrate=5`` twenty runs of noise report
nothing; a one-sentence edit, a changed number and a removed paragraph in the stable text are
each reported with a diff that shows them. Bad calibration input is survived."""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from changewatch.examples.site import FixtureSite

from .crawl import Crawler, SpiderCrawler
from .hostile import HostileSite, send

TRENDING = ["Cats learn to open doors", "A river changes course", "Ten recipes for rain",
            "The quiet comeback of trams"]
ADS = ["Buy the Kettle 3000 now", "Holidays in Norway from 499", "Switch your phone plan today"]
LINKS = ["Sports", "Weather", "Culture", "Science", "Travel"]
STABLE = ["Our terms of service describe how the service works.",
          "You may cancel your subscription at any time from your account page.",
          "We were founded in 1998 and answer every letter within 14 days.",
          "Refunds are paid to the card that was charged.",
          "These terms are governed by the laws of the Netherlands."]


@dataclass
class NoisyPage:
    """A page that varies on every load (as busy news and shop pages do) around stable text."""

    stable: list[str] = field(default_factory=lambda: list(STABLE))
    loads: int = 0
    #: loads served as a block page (a captcha wall) or a server error
    blocked: set[int] = field(default_factory=set)
    failing: set[int] = field(default_factory=set)
    #: from this load on, a stable line is edited: (load, line number, new text)
    edit: tuple[int, int, str] | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def html(self, n: int) -> str:
        tag = f"{random.Random(n).getrandbits(32):08x}"  # a generated class name, per load
        trending = "".join(f"<li class='t-{tag}'>{TRENDING[(n + i) % 4]}</li>" for i in range(3))
        links = random.Random(n * 7).sample(LINKS, len(LINKS))
        half = "<div class='live'>Breaking: live coverage of the election</div>" if n % 2 else ""
        teaser = "Read our new weekly digest" if (n // 2) % 2 else "Try the digest free for a month"
        newsletter = "<aside>Sign up for the newsletter</aside>"
        stable = "".join(f"<p id='p-{tag}-{i}'>{line}</p>" for i, line in enumerate(self.stable))
        body = (f"<header class='h-{tag}'><nav><ul>{''.join(f'<li>{x}</li>' for x in links)}</ul></nav></header>"
                f"{newsletter if n % 3 == 0 else ''}<main><h1>Terms of service</h1>{stable}</main>"
                f"<section id='trend-{n}'><h2>Trending now</h2><ul>{trending}</ul></section>"
                f"<p>{1204 + 17 * n:,} readers right now</p>{half}<div class='ad-{tag}'>{ADS[n % 3]}</div>"
                f"<p class='teaser'>{teaser}</p>{newsletter if n % 3 else ''}<footer>Contact us</footer>")
        return f"<html><head><title>Terms</title></head><body>{body}</body></html>"

    def __call__(self, h: BaseHTTPRequestHandler) -> None:
        with self.lock:
            n = self.loads
            self.loads += 1
            if self.edit is not None and n == self.edit[0]:
                self.stable[self.edit[1]] = self.edit[2]
        if n in self.failing:
            send(h, 500, b"<h1>Internal error</h1>")
        elif n in self.blocked:
            send(h, 200, b"<html><body><h1>Are you a robot?</h1><p>Please complete the captcha.</p></body></html>")
        else:
            send(h, 200, self.html(n).encode())


def noisy_site(site: HostileSite, path: str = "/terms") -> NoisyPage:
    noisy = NoisyPage()
    site.good[path] = noisy
    return noisy


def calibrated(site: HostileSite, tmp_path: Path, *extra: str) -> tuple[Crawler, NoisyPage]:
    noisy = noisy_site(site)
    crawler = Crawler(tmp_path, [{"key": "terms", "url": f"{site.base}/terms"}])
    first = crawler.run("-a", "calibrate=5", *extra)
    assert first.returncode == 0 and first.records == [], first.stderr[-3000:]
    assert first.stats["changewatch/calibration/requests"] == 5
    return crawler, noisy


def changed_lines(diff: str) -> list[str]:
    return [line for line in diff.split("\n") if line[:2] in ("- ", "+ ")]


def test_calibrated_busy_page_stays_quiet_and_edits_show(site: HostileSite, tmp_path: Path) -> None:
    crawler, noisy = calibrated(site, tmp_path)
    assert noisy.loads == 7  # the normal load, its baseline's second load and five calibration loads
    for run in range(20):
        result = crawler.run()
        assert result.returncode == 0 and result.records == [], (run, [r.get("diff") for r in result.records])

    noisy.stable[0] = "Our terms of service describe how the service works and what it costs."
    edit = crawler.run().records
    assert [r["kind"] for r in edit] == ["content"], edit
    assert changed_lines(edit[0]["diff"]) == [f"- {STABLE[0]}", f"+ {noisy.stable[0]}"], edit[0]["diff"]

    noisy.stable[2] = noisy.stable[2].replace("14 days", "30 days")
    number = crawler.run().records
    assert [r["kind"] for r in number] == ["content"] and "+ We were founded in 1998 and answer every letter " \
        "within 30 days." in number[0]["diff"], number

    del noisy.stable[3]
    removed = crawler.run().records
    assert [r["kind"] for r in removed] == ["content"], removed
    assert changed_lines(removed[0]["diff"]) == [f"- {STABLE[3]}"], removed[0]["diff"]
    assert crawler.run().records == []  # and quiet again


def test_uncalibrated_busy_page_is_reported_unless_confirmed(site: HostileSite, tmp_path: Path) -> None:
    """The problem calibration and confirmation solve: without either, the same page is a content
    change each run; a confirmation (a second load) shows the difference is where the page varies."""
    noisy = noisy_site(site)
    crawler = Crawler(tmp_path, [{"key": "terms", "url": f"{site.base}/terms"}])
    assert crawler.run("-s", "CHANGEWATCH_CONFIRM_CHANGES=False").records == []
    assert [r["kind"] for r in crawler.run("-s", "CHANGEWATCH_CONFIRM_CHANGES=False").records] == ["content"]
    loads = noisy.loads
    confirmed = crawler.run()
    assert noisy.loads == loads + 2
    # The rotating box, the ads, the counter and the reshuffled links vary between the two loads:
    # none of them is reported. The teaser switches every two loads, so both loads of a run show
    # the same one: from two loads it reads as a line replaced, which is reported (once, then
    # learned when it flips back): the one thing a confirmation cannot tell.
    teasers = {"Read our new weekly digest", "Try the digest free for a month"}
    for record in confirmed.records:
        assert {line[2:] for line in changed_lines(record["diff"])} <= teasers, record["diff"]
    assert confirmed.stats.get("changewatch/confirm/dropped", 0) + len(confirmed.records) == 1


def test_calibration_survives_errors_and_block_pages(site: HostileSite, tmp_path: Path) -> None:
    noisy = noisy_site(site)
    noisy.failing = {3, 4, 5}  # one calibration load, and its two retries (load 1: the baseline's second)
    noisy.blocked = {7}
    crawler = Crawler(tmp_path, [{"key": "terms", "url": f"{site.base}/terms"}])
    first = crawler.run("-a", "calibrate=7")
    assert first.returncode == 0 and first.records == [], first.records
    # seven calibration loads: one failed (three fetches), one blocked, five learned from
    assert noisy.loads == 11 and first.stats["changewatch/calibration/errors"] == 2, first.stats
    assert first.stats["changewatch/calibration/loads"] == 5
    quiet = [crawler.run().records for _ in range(3)]
    assert quiet == [[], [], []], quiet


def test_real_change_during_calibration_is_reported_after_it(site: HostileSite, tmp_path: Path) -> None:
    noisy = noisy_site(site)
    noisy.edit = (3, 1, "You may no longer cancel your subscription.")  # seen by calibration loads 3 to 5
    crawler = Crawler(tmp_path, [{"key": "terms", "url": f"{site.base}/terms"}])
    calibration = crawler.run("-a", "calibrate=5")
    assert calibration.returncode == 0 and calibration.records == []  # calibration exports nothing
    after = crawler.run().records  # the baseline is the normal load's: the edit shows now
    assert [r["kind"] for r in after] == ["content"], after
    assert changed_lines(after[0]["diff"]) == [f"- {STABLE[1]}", f"+ {noisy.stable[1]}"], after[0]["diff"]
    assert after[0]["ignored_regions"]["count"] >= 1
    assert [crawler.run().records for _ in range(3)] == [[], [], []]  # and never learned as noise


@pytest.mark.parametrize("value", ["abc", "-1", "101"])
def test_bad_calibrate_stops_the_crawl(site: HostileSite, tmp_path: Path, value: str) -> None:
    noisy = noisy_site(site)
    result = Crawler(tmp_path, [{"key": "terms", "url": f"{site.base}/terms"}]).run("-a", f"calibrate={value}")
    assert result.returncode != 0 and noisy.loads == 0
    assert "calibrate must be a whole number of extra loads from 0 to 100" in result.stderr
    # said once, not buried in asyncio's "Task exception was never retrieved" traceback
    assert "Task exception was never retrieved" not in result.stderr and "Traceback" not in result.stderr


def test_calibrate_zero_and_one_and_fifty(site: HostileSite, tmp_path: Path) -> None:
    noisy = noisy_site(site)
    crawler = Crawler(tmp_path, [{"key": "terms", "url": f"{site.base}/terms"}])
    zero = crawler.run("-a", "calibrate=0")
    # the baseline is two loads (where the page varies is learned from them)
    assert zero.returncode == 0 and noisy.loads == 2 and "changewatch/calibration/requests" not in zero.stats
    # the normal load, its confirmation when it differs from the baseline, the calibration loads
    one = crawler.run("-a", "calibrate=1")
    confirmations = one.stats.get("changewatch/confirm/sent", 0)
    assert one.returncode == 0 and noisy.loads == 4 + confirmations and one.stats["changewatch/calibration/loads"] == 1
    fifty = crawler.run("-a", "calibrate=50")
    confirmations += fifty.stats.get("changewatch/confirm/sent", 0)
    assert fifty.returncode == 0 and noisy.loads == 55 + confirmations
    assert fifty.stats["changewatch/calibration/loads"] == 50
    assert [crawler.run().records for _ in range(3)] == [[], [], []]


def test_forget_resets_what_was_learned(site: HostileSite, tmp_path: Path) -> None:
    crawler, _ = calibrated(site, tmp_path)
    assert crawler.run().records == []
    forgot = crawler.run("-a", "forget=terms", "-s", "CHANGEWATCH_CONFIRM_CHANGES=False")
    assert forgot.stats["changewatch/calibration/forgotten"] == 1
    assert [r["kind"] for r in forgot.records] == ["content"]  # the noise is news again (without confirmation)
    again = crawler.run("-a", "forget=terms", "-a", "calibrate=5")  # and learned afresh
    assert again.returncode == 0 and again.stats["changewatch/calibration/loads"] == 5
    assert [crawler.run().records for _ in range(3)] == [[], [], []]


def test_forget_of_a_key_the_store_does_not_hold_stops_the_crawl(site: HostileSite, tmp_path: Path) -> None:
    crawler, noisy = calibrated(site, tmp_path)
    before = noisy.loads
    typo = crawler.run("-a", "forget=trems", "-a", "calibrate=5")
    assert typo.returncode == 1 and noisy.loads == before  # before anything was fetched
    assert typo.stats.get("downloader/request_count", 0) == 0
    errors = [line for line in typo.stderr.splitlines() if " ERROR: " in line or " CRITICAL: " in line]
    assert errors == [errors[0]] and "-a forget=trems: spider 'watch' has no stored observation of key 'trems'" \
        in errors[0], typo.stderr[-3000:]
    assert "Traceback" not in typo.stderr and "Task exception was never retrieved" not in typo.stderr
    assert crawler.run().records == []  # what was learned of 'terms' is untouched


def test_per_site_spiders_calibrate_too(catalogue: tuple[FixtureSite, str], tmp_path: Path) -> None:
    _, base = catalogue
    crawler = SpiderCrawler(tmp_path, "catalogue", "-a", f"site={base}")
    first = crawler.run("-a", "calibrate=2")
    assert first.returncode == 0 and first.records == [], first.stderr[-3000:]
    requests = first.stats["changewatch/calibration/requests"]
    assert requests == 2 * first.stats["changewatch/commit/baseline"]
    assert first.stats["changewatch/calibration/loads"] == requests  # nothing failed, nothing exported
    assert first.stats.get("changewatch/calibration/requests_dropped", 0) >= 0
    assert crawler.run().records == []
    bad = crawler.run("-a", "calibrate=abc")
    assert bad.returncode != 0 and "calibrate must be a whole number" in bad.stderr
    assert "Task exception was never retrieved" not in bad.stderr and "Traceback" not in bad.stderr
    assert bad.stats.get("downloader/request_count", 0) == 0  # stopped before anything was fetched


def test_calibration_after_a_304_fetches_in_full(site: HostileSite, tmp_path: Path) -> None:
    noisy = NoisyPage()
    conditional: list[str | None] = []

    def handler(h: BaseHTTPRequestHandler) -> None:
        conditional.append(h.headers.get("If-None-Match"))
        if h.headers.get("If-None-Match") == '"v1"':
            h.send_response(304)
            h.send_header("ETag", '"v1"')
            h.end_headers()
            return
        with noisy.lock:
            n = noisy.loads
            noisy.loads += 1
        send(h, 200, noisy.html(n).encode(), headers={"ETag": '"v1"'})

    site.good["/terms"] = handler
    crawler = Crawler(tmp_path, [{"key": "terms", "url": f"{site.base}/terms"}])
    assert crawler.run().records == []
    second = crawler.run("-a", "calibrate=3")
    assert second.returncode == 0 and second.records == []
    # the baseline's two loads, then the normal load answered 304; calibration never asks
    assert conditional == [None, None, '"v1"', None, None, None]
    assert second.stats["changewatch/calibration/loads"] == 3


def test_a_page_whose_every_line_varies_is_reported_noisy_once(site: HostileSite, tmp_path: Path) -> None:
    loads = iter(range(1000))

    def churn(h: BaseHTTPRequestHandler) -> None:
        n = next(loads)
        lines = "".join(f"<p>{TRENDING[(n + i) % 4]} {chr(65 + (n * 3 + i) % 7)}</p>" if i % 2 else
                        f"<p>{ADS[(n + i) % 3]} ({(n * 7 + i) % 5} left)</p>" for i in range(10))
        send(h, 200, f"<html><body>{lines}</body></html>".encode())

    site.good["/churn"] = churn
    crawler = Crawler(tmp_path, [{"key": "churn", "url": f"{site.base}/churn"}])
    assert crawler.run("-a", "calibrate=8").records == []
    told = crawler.run()
    assert [(r["kind"], r["error"][:7]) for r in told.records] == [("error", "noisy: ")], told.records
    assert told.stats["changewatch/commit/noisy"] == 1 and "every line of the page varies" in told.stderr
    assert [crawler.run().records for _ in range(2)] == [[], []]  # said once; never "recovered"
