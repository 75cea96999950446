"""The adaptive schedule's model (changewatch/core/schedule.py) on a simulated clock: thirty
simulated days of hourly runs in microseconds, nothing sleeps. A page that changes daily is
visited about daily, one that never changes drifts to the longest interval, one that starts
changing is caught up within a few visits, and bad times (clock skew, damaged state) never
leave a key unvisited for long."""

from __future__ import annotations

import itertools
import math
import random
import statistics
from collections.abc import Callable

import pytest

from changewatch.core.schedule import (
    Bounds,
    Due,
    DueEntry,
    RateEstimate,
    ScheduleUpdate,
    decide,
    epoch,
    iso,
    rates,
)

PRIOR = RateEstimate.prior().weights

DAY = 86400.0
HOUR = 3600.0
BOUNDS = Bounds(15 * 60.0, 7 * DAY)  # the defaults: 15m and 7d
START = 1_750_000_000.0  # a moment in 2025, in whole seconds

Version = Callable[[float], int]  # the page's version at a simulated time (seconds since START)


def simulate(version: Version, days: float = 30, cron: float = HOUR, bounds: Bounds = BOUNDS
             ) -> list[tuple[float, float, bool]]:
    """Runs every *cron* seconds for *days*, as the crawl does them: the key is fetched when due
    (decide), its outcome told to the model through the store's columns (ScheduleUpdate), and
    the due state read back as the store gives it. Each fetch: (time, interval chosen, changed)."""
    text: str | None = None
    entry: DueEntry | None = None
    seen: int | None = None
    fetches: list[tuple[float, float, bool]] = []
    now = 0.0
    while now < days * DAY:
        if decide(entry, START + now, every=None, adaptive=True).due:
            current = version(now)
            changed = seen is not None and current != seen
            text, due_at, interval = ScheduleUpdate(changed, bounds).columns(text, iso(START + now))
            entry = DueEntry(last_seen=START + now, due_at=epoch(due_at), interval=interval)
            seen = current
            fetches.append((now, interval, changed))
        now += cron
    return fetches


def between(fetches: list[tuple[float, float, bool]], first_day: float, last_day: float) -> list[float]:
    return [t for t, _, _ in fetches if first_day * DAY <= t < last_day * DAY]


def test_a_page_that_changes_daily_is_visited_about_daily() -> None:
    fetches = simulate(lambda t: int(t // DAY))
    visits = between(fetches, 10, 30)  # once it has learnt
    assert 20 * 0.7 <= len(visits) <= 20 * 2.5, len(visits)
    gaps = [b - a for a, b in itertools.pairwise(visits)]
    assert max(gaps) <= 1.5 * DAY
    found = sum(1 for t, _, changed in fetches if changed and t >= 10 * DAY)
    assert found >= 18  # (nearly) every day's change is seen the day it happens


def _poisson_page(changes: list[float]) -> Version:
    return lambda t: sum(1 for c in changes if c <= t)


def test_pages_changing_at_random_once_a_day_are_visited_about_daily() -> None:
    """Changes at random times (a Poisson process), one a day on average, on twelve pages: their
    visits over the last twenty of thirty days, about one and a half a day (a change is as likely
    as not after 17 hours), none of them starved."""
    visits = []
    for seed in range(12):
        rng = random.Random(seed)
        changes, moment = [], 0.0
        while moment < 40 * DAY:
            moment += rng.expovariate(1 / DAY)
            changes.append(moment)
        visits.append(len(between(simulate(_poisson_page(changes)), 10, 30)))
    assert 20 * 1.0 <= statistics.median(visits) <= 20 * 2.0, visits
    assert min(visits) >= 20 * 0.5, visits


def test_a_page_that_never_changes_drifts_to_the_longest_interval() -> None:
    fetches = simulate(lambda t: 0)
    assert fetches[-1][1] == BOUNDS.maximum
    assert len(fetches) <= 9  # the first day's few, then about weekly
    assert len(between(fetches, 15, 30)) <= 3


def test_a_page_that_starts_changing_is_caught_up_quickly() -> None:
    fetches = simulate(lambda t: 0 if t < 15 * DAY else int(t // DAY))
    found = next(t for t, _, changed in fetches if changed)
    assert found <= 15 * DAY + BOUNDS.maximum  # seen at the next visit, however long it was
    after = [t for t in between(fetches, found / DAY, 30)]
    # within three days of the first change found, it is visited at least daily again
    settled = [t for t in after if t >= found + 3 * DAY]
    gaps = [b - a for a, b in itertools.pairwise(settled)]
    assert gaps and max(gaps) <= 1.5 * DAY, [round(t / DAY, 2) for t in after]


def test_a_page_that_stops_changing_drifts_back_to_the_longest_interval() -> None:
    fetches = simulate(lambda t: int(t // DAY) if t < 10 * DAY else 10)
    assert fetches[-1][1] == BOUNDS.maximum
    assert len(between(fetches, 20, 30)) <= 3


def test_a_page_that_changes_every_few_minutes_is_held_at_the_shortest_interval() -> None:
    fetches = simulate(lambda t: int(t // 300), days=3, cron=15 * 60.0)
    assert fetches[-1][1] == BOUNDS.minimum
    assert len(between(fetches, 2, 3)) >= 90  # every 15-minute run of the last day


def test_the_bounds_hold_the_interval() -> None:
    quick = RateEstimate(PRIOR)
    assert quick.interval(Bounds(2 * DAY, 2 * DAY)) == 2 * DAY
    assert BOUNDS.minimum <= quick.interval(BOUNDS) <= BOUNDS.maximum
    with pytest.raises(ValueError, match="need 0 < minimum <= maximum"):
        Bounds(DAY, HOUR)
    with pytest.raises(ValueError):
        Bounds(0, DAY)


def test_the_first_interval_comes_from_the_prior() -> None:
    """Before any visit a key is believed to change about once a day: due again within the day."""
    interval = RateEstimate.prior().interval(BOUNDS)
    assert 6 * HOUR <= interval <= DAY
    assert math.isclose(RateEstimate.prior().change_probability(interval), 0.5, abs_tol=0.03)
    assert len(rates()) == len(PRIOR) and math.isclose(float(PRIOR.sum()), 1.0)


def test_the_estimate_round_trips_through_its_text() -> None:
    estimate = RateEstimate.prior().learn(START, False, BOUNDS).learn(START + DAY, True, BOUNDS)
    again = RateEstimate.decode(estimate.encode())
    assert again.at == START + DAY
    assert again.interval(BOUNDS) == pytest.approx(estimate.interval(BOUNDS), rel=1e-4)
    assert len(estimate.encode()) < 200  # a small column per key


@pytest.mark.parametrize("damaged", ["", "{", "[]", '{"v": 2, "w": ""}', '{"v": 1}', '{"v": 1, "w": "!!"}',
                                     '{"v": 1, "w": "AAAA"}', '{"v": 1, "w": "AACAfw==", "at": 5}', "null", "7"])
def test_a_damaged_estimate_starts_again_from_the_prior(damaged: str) -> None:
    estimate = RateEstimate.decode(damaged)
    assert estimate.interval(BOUNDS) == RateEstimate.prior().interval(BOUNDS)


def test_an_error_teaches_nothing_and_keeps_the_cadence() -> None:
    learnt, _, interval = ScheduleUpdate(False, BOUNDS).columns(None, iso(START))
    after_error, error_due, error_interval = ScheduleUpdate(None, BOUNDS).columns(learnt, iso(START + HOUR))
    assert RateEstimate.decode(after_error).at == START  # the next good visit's elapsed time spans the error
    assert error_interval == pytest.approx(interval, rel=1e-5)  # (kept as 32-bit weights)
    assert abs((epoch(error_due) or 0) - (START + HOUR + interval)) < 1  # from the error's time, whole seconds


def test_a_visit_not_after_the_last_learns_nothing() -> None:
    """A fetch time earlier than (or equal to) the last one learnt from: clocks disagreeing."""
    text, _, _ = ScheduleUpdate(False, BOUNDS).columns(None, iso(START))
    text, _, before = ScheduleUpdate(True, BOUNDS).columns(text, iso(START + DAY))
    back, _, interval = ScheduleUpdate(True, BOUNDS).columns(text, iso(START + HOUR))
    assert interval == pytest.approx(before) and RateEstimate.decode(back).at == START + DAY
    with pytest.raises(ValueError, match="not an ISO 8601 time"):
        ScheduleUpdate(True, BOUNDS).columns(text, "yesterday")


# -- when a key is due ---------------------------------------------------------------------------------------------

def test_a_key_never_seen_or_never_scheduled_is_due() -> None:
    assert decide(None, START, every=HOUR, adaptive=True) == Due(True)
    assert decide(DueEntry(), START, every=None, adaptive=True) == Due(True)
    assert decide(DueEntry(last_seen=START), START, every=None, adaptive=False) == Due(True)  # no schedule


def test_every_counts_from_the_last_fetch_and_wins_over_the_bounds() -> None:
    entry = DueEntry(last_seen=START, due_at=START + 7 * DAY, interval=7 * DAY)
    assert not decide(entry, START + 4 * 60, every=5 * 60, adaptive=True).due  # below the 15-minute minimum
    assert decide(entry, START + 5 * 60, every=5 * 60, adaptive=True).due  # the watch's own every wins
    assert not decide(entry, START + HOUR, every=None, adaptive=True).due  # its adaptive due time is days away


def test_slack_and_overdue() -> None:
    entry = DueEntry(last_seen=START, due_at=START + 10 * HOUR, interval=10 * HOUR)
    assert not decide(entry, START + 8.9 * HOUR, every=None, adaptive=True).due
    assert decide(entry, START + 9.1 * HOUR, every=None, adaptive=True) == Due(True, False, START + 10 * HOUR)
    assert decide(entry, START + 20.5 * HOUR, every=None, adaptive=True).overdue


def test_a_due_time_nobody_can_trust_makes_a_key_due() -> None:
    """A due time further ahead than its interval: the clock moved back (or the fetch time came
    from a clock ahead). The key is due, not kept waiting until the clocks agree."""
    entry = DueEntry(last_seen=START, due_at=START + DAY, interval=DAY)
    a_year_back = START - 365 * DAY
    assert decide(entry, a_year_back, every=None, adaptive=True).due
    assert decide(entry, a_year_back, every=HOUR, adaptive=False).due
    assert not decide(entry, START + HOUR, every=None, adaptive=True).due  # while a sane one waits
