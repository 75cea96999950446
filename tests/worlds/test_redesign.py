"""A redesign that renames both anchors of a learned box ("Trending now" → "Most read this week",
"More stories" → "See every story"), judged as a crawl judges it: a baseline of two loads, three
calibration loads, three noise-only runs, then the redesign, confirmed by a second load."""

from __future__ import annotations

import pickle
import random
from datetime import timedelta

import pytest

from changewatch.core.comparisons import Kind
from changewatch.core.comparisons.noise import CALIBRATION
from changewatch.core.observation import Observation
from changewatch.runtime import offload
from changewatch.runtime.offload import Judged, judge_in_worker

from .harness import T0, _context, _table, judge_once

STABLE = ["Opening hours: Monday to Friday, 9:00 to 18:00.", "Members may borrow up to ten books at once.",
          "Lost cards are replaced at the front desk."]
WORDS = "harbour council theatre tram stadium festival garden library market ferry station museum".split()
HEADLINES = [f"{' '.join(random.Random(n).sample(WORDS, 5)).capitalize()} ({chr(65 + n % 26)})" for n in range(400)]


def html(n: int, heading: str, trailer: str) -> str:
    box = "".join(f"<li>{h}</li>" for h in random.Random(n * 31 + 7).sample(HEADLINES, 5))
    stable = "".join(f"<p>{line}</p>" for line in STABLE)
    return (f"<html><body><main><h1>Town library</h1>{stable}</main><aside><h2>{heading}</h2><ul>{box}</ul>"
            f"<p>{trailer}</p></aside><footer>Contact the library</footer></body></html>")


def _task(task: object) -> Judged:
    result: Judged = pickle.loads(judge_in_worker(pickle.dumps(task, protocol=5)))
    return result


def redesign_diff(offset: int) -> str:
    loads = iter(range(offset, offset + 100))
    names = {"heading": "Trending now", "trailer": "More stories"}

    def obs(at: timedelta, calibration: bool = False) -> tuple[Observation, bytes]:
        body = html(next(loads), names["heading"], names["trailer"])
        options = {CALIBRATION: True} if calibration else {}
        when = (T0 + at).strftime("%Y-%m-%dT%H:%M:%SZ")
        return Observation("library", "https://library.test/", html=body, options=options, observed_at=when), \
            body.encode()

    first, body = obs(timedelta(0))
    second, _ = obs(timedelta(seconds=4))
    snapshot = _task(offload.ConfirmTask(first, second, None, _table(), _context(second), body)).snapshot
    for i in range(3):
        load, body = obs(timedelta(seconds=10 + 3 * i), calibration=True)
        snapshot = judge_once(load, snapshot, body).snapshot or snapshot

    def run(hour: int) -> Judged:
        nonlocal snapshot
        load, body = obs(timedelta(hours=hour))
        judged = judge_once(load, snapshot, body)
        if judged.kind.changes_page:
            again, again_body = obs(timedelta(hours=hour, seconds=4))
            judged = _task(offload.ConfirmTask(load, again, snapshot, _table(), _context(again), again_body))
        if judged.kind is not Kind.ERROR and judged.snapshot is not None:
            snapshot = judged.snapshot
        return judged

    assert [run(hour).kind.reported for hour in (1, 2, 3)] == [False, False, False]
    names.update(heading="Most read this week", trailer="See every story")
    judged = run(4)
    assert judged.kind is Kind.CONTENT
    return str(judged.members["diff"])


@pytest.mark.parametrize("offset", range(4))
def test_a_redesign_of_a_boxs_anchors_is_reported(offset: int) -> None:
    changed = [line for line in redesign_diff(offset).split("\n") if line[:2] in ("- ", "+ ")]
    assert "- Trending now" in changed and "- More stories" in changed, changed


@pytest.mark.xfail(strict=True, reason="known defect: with the confirmation's second reading (where the two loads "
                   "differ taken as slots, core/confirm_slots.py) a box whose heading and trailer are both renamed "
                   "can be read with its new heading and trailer inside the box: the diff shows them as unchanged "
                   "lines; which headlines the loads draw decides it (7 of the first 8 offsets here)")
def test_a_redesign_of_a_boxs_anchors_shows_the_new_anchors_as_added() -> None:
    for offset in range(4):
        changed = [line for line in redesign_diff(offset).split("\n") if line[:2] in ("- ", "+ ")]
        assert "+ Most read this week" in changed and "+ See every story" in changed, (offset, changed)
