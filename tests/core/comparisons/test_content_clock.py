"""Dates and times through the whole judgement: a page's own dates and times are content, reported
in its words; a clock that tracks the fetch time is not, over any number of runs; a snapshot read
by the previous normaliser re-baselines silently."""

from __future__ import annotations

import json
import random
import struct
from datetime import UTC, datetime, timedelta

import pytest

from changewatch.core.comparisons import CompareContext, Kind, load_comparisons
from changewatch.core.observation import Observation
from changewatch.core.snapshot import Snapshot
from changewatch.core.text.normalise import NORMALISER_VERSION
from changewatch.core.verdict import Verdict, observe

from .._support import article_html, prose_paragraphs

COMPARISONS = load_comparisons()
START = datetime(2026, 12, 5, 6, 3, 17, tzinfo=UTC)
PARAGRAPHS = prose_paragraphs(1500)


def _page(*lines: str) -> str:
    return article_html([*PARAGRAPHS[:6], *lines, *PARAGRAPHS[6:]])


def _clock(at: datetime, rng: random.Random, offset: int = 60) -> str:
    return f"Updated {rng.randint(2, 59)} minutes ago · {at + timedelta(minutes=offset):%H:%M}"


def _observe(html: str, at: datetime, old: bytes | None) -> Verdict:
    before = Snapshot.decode(old, COMPARISONS) if old is not None else None
    obs = Observation(key="k", url="https://example.com/", html=html.encode(), encoding="utf-8",
                      observed_at=f"{at:%Y-%m-%dT%H:%M:%SZ}")
    return observe(obs, before, COMPARISONS, context=CompareContext())


def _stored(verdict: Verdict, old: bytes | None) -> bytes | None:
    return verdict.keep.encode(COMPARISONS) if verdict.keep is not None else old


@pytest.mark.parametrize("offset", [60, -300, 0, 330])
def test_a_clock_only_page_never_alerts_over_many_runs(offset: int) -> None:
    rng = random.Random(offset)
    at, stored, reported = START, None, []
    notice = "Doors open at 19:30."
    for run in range(150):
        verdict = _observe(_page(_clock(at, rng, offset), notice), at, stored)
        if run and verdict.kind.reported:
            reported.append((run, verdict.kind, verdict.diff))
        stored = _stored(verdict, stored)
        at += timedelta(minutes=rng.choice([7, 30, 60, 61, 180, 24 * 60 + 13]))
    assert reported == []


@pytest.mark.parametrize(("old", "new"), [
    ("Doors open at 19:30.", "Doors open at 21:00."),
    ("Application deadline: 12 March 2027.", "Application deadline: 19 March 2027."),
    ("We are open on Tuesday at 6 pm.", "We are open on Thursday at 6 pm."),
    ("Saturday: 10:00 - 16:00", "Saturday: 10:00 - 14:00"),
    ("The new fares are effective from 1 February 2027.", "The new fares are effective from 1 March 2027."),
])
def test_a_changed_date_or_time_on_a_clock_page_is_reported_in_the_page_s_words(old: str, new: str) -> None:
    rng = random.Random(3)
    at, stored = START, None
    for _ in range(3):  # the clock learned first
        stored = _stored(_observe(_page(_clock(at, rng), old), at, stored), stored)
        at += timedelta(minutes=47)
    verdict = _observe(_page(_clock(at, rng), new), at, stored)
    assert verdict.kind is Kind.CONTENT
    assert verdict.diff is not None
    assert f"- {old}" in verdict.diff and f"+ {new}" in verdict.diff
    # the clock is no part of the change (its line, without the time, is context)
    assert "  Updated\n" in verdict.diff and "- Updated" not in verdict.diff and "+ Updated" not in verdict.diff


def test_a_weekday_in_a_sentence_stays_in_the_diff() -> None:
    at = START
    first = _observe(_page("Roundhay Park reopened on Saturday after a year of work."), at, None)
    verdict = _observe(_page("Roundhay Park reopened on Saturday after a year of work on its lakes."),
                       at + timedelta(hours=3), _stored(first, None))
    assert verdict.kind is Kind.CONTENT and verdict.diff is not None
    assert "- Roundhay Park reopened on Saturday after a year of work." in verdict.diff


def test_a_stamp_in_its_own_zone_tracking_the_fetch_is_a_clock_from_the_first_run() -> None:
    at, stored = START, None
    for run in range(20):
        verdict = _observe(_page(f"Page generated {at:%Y-%m-%d %H:%M} UTC"), at, stored)
        assert run == 0 or not verdict.kind.reported, verdict.diff
        stored = _stored(verdict, stored)
        at += timedelta(hours=5, minutes=11)


def _as_previous_normaliser(snapshot: bytes) -> bytes:
    """*snapshot* as the previous normaliser stored it: no fetch time, clock nor normaliser in its
    content part, and a body hash of another reading."""
    (size,) = struct.unpack_from(">I", snapshot, 4)
    header = json.loads(snapshot[8:8 + size])
    data = header["content"]["data"]
    for name in ("fetched_at", "clock", "normaliser"):
        data.pop(name, None)
    data["body_hash"] = "0" * 32
    head = json.dumps(header, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode()
    return snapshot[:4] + struct.pack(">I", len(head)) + head + snapshot[8 + size:]


def test_a_snapshot_of_the_previous_normaliser_re_baselines_silently_on_a_page_with_dates() -> None:
    at = START
    old_page = _page("Friday, 4 December 2026", "Updated 10:32", "Doors open at 19:30.")
    stored = _stored(_observe(old_page, at - timedelta(days=1), None), None)
    assert stored is not None
    previous = _as_previous_normaliser(stored)
    assert Snapshot.decode(previous, COMPARISONS).part("content").normaliser is None
    new_page = _page("Saturday, 5 December 2026", "Updated 11:47", "Doors open at 19:30.")
    verdict = _observe(new_page, at, previous)
    assert verdict.kind is Kind.NONE and not verdict.error
    assert verdict.counters.get("content/rebaselined") == 1
    rebaselined = _stored(verdict, previous)
    assert Snapshot.decode(rebaselined, COMPARISONS).part("content").normaliser == NORMALISER_VERSION
    # from then on, its dates are content
    later = _observe(new_page.replace("19:30", "20:00"), at + timedelta(hours=2), rebaselined)
    assert later.kind is Kind.CONTENT and "+ Doors open at 20:00." in (later.diff or "")


def test_the_same_page_with_its_dates_read_by_this_normaliser_is_no_change() -> None:
    page = _page("Friday, 4 December 2026", "Doors open at 19:30.")
    first = _observe(page, START, None)
    again = _observe(page.replace("<footer>", "<footer> "), START + timedelta(hours=1), _stored(first, None))
    assert again.kind in (Kind.NONE, Kind.NOISE) and not again.counters.get("content/rebaselined")
