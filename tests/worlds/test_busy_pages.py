"""Busy pages in the pure core (tests/worlds/harness.py): the numbers changewatch promises.

On real pages with trending boxes drawn from hundreds of headlines, ad slots with a new phrase per
load, reshuffled related lists with new items, counters, clocks, hashed class names, A/B teasers
and blocks on some loads: at most 2% of noise-only observations alert after ``-a calibrate=5``, at
most 5% with no calibration (confirmation alone), while at least 99% of real changes (a word, a
number, a paragraph added or removed, a heading, the date or time of a notice) are reported, each
diff's changed lines the page's own; pages without visible noise, and pages whose only noise is a
clock, never alert.

The fast lane runs a few pages and runs (a rate's allowance rounds up to one alert); the slow test
runs the full test web (hundreds of observations per condition), as ``bench/bench_busy_pages.py``
prints it. Where the core cannot confirm yet (no changewatch.core.confirm), the busy-page targets
are expected to fail: strict, so the day they pass the marker must go.
"""

from __future__ import annotations

import math

import pytest

from .busy import CORPUS, WorldPage, world
from .harness import ChangeTally, Key, Tally, confirmation_available, dates_are_content, run_changes, run_noise

PAGES = world(5)
needs_corpus = pytest.mark.skipif(not PAGES, reason=f"real-page corpus not found at {CORPUS}")
#: before confirmation and slots are in the core, busy pages alert: these are the acceptance tests
not_yet = pytest.mark.xfail(not confirmation_available(), strict=True,
                            reason="busy pages need confirmation (changewatch.core.confirm) and learned slots")


def _within(tally: Tally, share: float) -> bool:
    """At most *share* of the observations alert (rounded up: a few observations allow one)."""
    return tally.alerts <= math.ceil(share * tally.observations)


def _report(tally: Tally) -> str:
    return f"{tally.alerts}/{tally.observations} alerts, by noise kind {dict(tally.by_noise)}\n" + "\n".join(
        tally.samples[:3])


def _changes_ok(changes: ChangeTally, share: float = 0.99) -> tuple[bool, str]:
    applied = sum(changes.applied.values())
    reported = sum(changes.reported.values())
    clean = sum(changes.clean.values())
    ok = reported >= share * applied and clean >= share * applied
    return ok, (f"reported {dict(changes.reported)} clean {dict(changes.clean)} of {dict(changes.applied)}\n"
                + "\n".join(changes.failures[:10]))


def _busy(pages: list[WorldPage], runs: int, calibrate: int, confirm: bool) -> tuple[Tally, list[Key]]:
    keys: list[Key] = []
    return run_noise(pages, runs, calibrate=calibrate, confirm=confirm, keys=keys), keys


@needs_corpus
@pytest.mark.parametrize("kind", ["quiet", "clock"])
@pytest.mark.parametrize("calibrate", [0, 5])
def test_pages_without_visible_noise_and_clock_only_pages_never_alert(kind: str, calibrate: int) -> None:
    tally = run_noise([p.as_kind(kind) for p in PAGES[:4]], 6, calibrate=calibrate, confirm=True)
    assert tally.alerts == 0, _report(tally)


@needs_corpus
@not_yet
def test_busy_pages_after_calibrate_5_alert_on_at_most_2_percent_and_report_real_changes() -> None:
    tally, keys = _busy(PAGES, 8, calibrate=5, confirm=True)
    assert _within(tally, 0.02), _report(tally)
    ok, why = _changes_ok(run_changes(keys, 9))
    assert ok, why


@needs_corpus
def test_after_calibrate_5_real_changes_at_run_3_are_reported_with_only_their_words() -> None:
    # calibration has shown the key its furniture before its first runs: a change right after
    # them is reported, its diff without a box's line (bench_busy_pages.py --changes: 896/896)
    keys: list[Key] = []
    run_noise(PAGES, 2, calibrate=5, confirm=True, keys=keys)
    ok, why = _changes_ok(run_changes(keys, 3), share=1.0)
    assert ok, why


@needs_corpus
def test_busy_pages_without_calibration_alert_on_at_most_5_percent_and_report_real_changes() -> None:
    tally, keys = _busy(PAGES, 8, calibrate=0, confirm=True)
    assert _within(tally, 0.05), _report(tally)
    ok, why = _changes_ok(run_changes(keys, 9))
    assert ok, why


@needs_corpus
@pytest.mark.xfail(not dates_are_content(), strict=True, reason="dates and times in a page's text are thrown away")
def test_real_changes_of_quiet_pages_are_all_reported_with_only_their_words() -> None:
    keys: list[Key] = []
    run_noise([p.as_kind("quiet") for p in PAGES[:4]], 2, calibrate=0, confirm=True, keys=keys)
    ok, why = _changes_ok(run_changes(keys, 3), share=1.0)
    assert ok, why


@pytest.mark.slow
@needs_corpus
@pytest.mark.parametrize("calibrate, share", [
    pytest.param(5, 0.02, marks=not_yet),
    pytest.param(0, 0.05),  # over 30 runs; the first runs alone are above it (the test above)
])
def test_the_whole_test_web_meets_the_targets(calibrate: int, share: float) -> None:
    pages = world(20)
    tally, keys = _busy(pages, 30, calibrate=calibrate, confirm=True)
    assert tally.observations >= 500
    assert tally.alerts <= share * tally.observations, _report(tally)
    ok, why = _changes_ok(run_changes(keys, 31))
    assert ok, why


@pytest.mark.slow
@needs_corpus
@pytest.mark.parametrize("kind", ["quiet", "clock"])
def test_the_whole_test_webs_quiet_and_clock_pages_never_alert(kind: str) -> None:
    tally = run_noise([p.as_kind(kind) for p in world(20)], 10, calibrate=0, confirm=True)
    assert tally.alerts == 0, _report(tally)
