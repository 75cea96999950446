"""The store contract, every backend: the adaptive schedule's columns are written in the
observation's commit from the fetch time it stores (a clamped one too), the due table reads them
back, listed marks and forgetting; and thirty simulated days of scheduled runs on a real store."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from changewatch.core.comparisons import Kind
from changewatch.core.evidence import keep_body
from changewatch.core.schedule import Bounds, ScheduleUpdate, decide, epoch, iso
from changewatch.store import Evidence, HttpValidators, Lease, MaintainedStore, Outcome, Store

from ._support import T0, T1, T2, encoded

BOUNDS = Bounds(900.0, 7 * 86400.0)
URL = "https://s.example/p"


def scheduled(kind: Kind, at: str, changed: bool | None, *, record: bool = False, url: str = URL) -> Outcome:
    return Outcome(kind, url, at, snapshot=encoded() if kind is not Kind.ERROR else None,
                   record={"kind": kind.value} if record else None, error="blocked" if kind is Kind.ERROR else None,
                   schedule=ScheduleUpdate(changed, BOUNDS))


def test_the_schedule_is_written_with_the_observation(store: Store) -> None:
    assert isinstance(store, MaintainedStore)
    assert store.due_entries("spider", ["k"]) == {}  # a store with no history
    store.commit("spider", "k", None, scheduled(Kind.BASELINE, T0, False))
    state = store.read("spider", "k")
    assert state is not None and state.schedule is not None
    entry = store.due_entries("spider", ["k"])["k"]
    assert entry.last_seen == epoch(T0) and entry.interval is not None and entry.listed_at is None
    assert entry.due_at == epoch(iso((epoch(T0) or 0) + entry.interval))
    store.commit("spider", "k", 1, scheduled(Kind.FIELD, T1, True, record=True))
    after = store.due_entries("spider", ["k"])["k"]
    assert after.last_seen == epoch(T1) and after.interval is not None and after.interval < entry.interval
    store.commit("spider", "k", 2, Outcome(Kind.NONE, URL, T2))  # no schedule: its columns stay as they were
    assert store.due_entries("spider", ["k"])["k"].due_at == after.due_at
    assert store.due_entries("other", ["k"]) == {}


def test_due_entries_are_those_of_the_keys_asked_for(store: Store) -> None:
    assert isinstance(store, MaintainedStore)
    for key in ("a", "b", "c"):
        store.commit("spider", key, None, scheduled(Kind.BASELINE, T0, False))
    store.commit("other", "a", None, scheduled(Kind.BASELINE, T1, False))
    entries = store.due_entries("spider", ["c", "a", "never-stored"])
    assert sorted(entries) == ["a", "c"] and entries["a"].last_seen == epoch(T0)
    assert store.due_entries("spider", []) == {}
    assert store.due_entries("other", ["a", "b"])["a"].last_seen == epoch(T1) and "b" not in store.due_entries(
        "other", ["a", "b"])


def test_an_error_keeps_the_cadence_from_its_own_time(store: Store) -> None:
    assert isinstance(store, MaintainedStore)
    store.commit("spider", "k", None, scheduled(Kind.BASELINE, T0, False))
    interval = store.due_entries("spider", ["k"])["k"].interval
    store.commit("spider", "k", 1, scheduled(Kind.ERROR, T1, None))
    entry = store.due_entries("spider", ["k"])["k"]
    assert entry.interval == pytest.approx(interval, rel=1e-5)  # (the estimate is kept as 32-bit weights)
    assert entry.due_at is not None and abs(entry.due_at - ((epoch(T1) or 0) + (interval or 0))) < 1


def test_a_fetch_time_from_the_future_never_pushes_a_key_ahead(store: Store) -> None:
    """Clock skew: a node two years ahead. The store clamps the fetch time to its clock, and the
    due time is counted from the time it stored, within the longest interval of it."""
    assert isinstance(store, MaintainedStore)
    now = store.now()
    ahead = (now + timedelta(days=730)).strftime("%Y-%m-%dT%H:%M:%SZ")
    committed = store.commit("spider", "k", None, scheduled(Kind.BASELINE, ahead, False))
    assert committed.clamped
    entry = store.due_entries("spider", ["k"])["k"]
    assert entry.last_seen is not None and abs(entry.last_seen - now.timestamp()) < 120
    assert entry.due_at is not None and entry.due_at <= now.timestamp() + BOUNDS.maximum + 120


def test_bounds_that_changed_move_the_due_times_set_under_the_old_ones(store: Store) -> None:
    """A key scheduled under the default bounds, at the maximum or near the minimum, is moved to
    the new bound in one statement; its due time moves with it, from the observation that set it;
    keys within the bounds and other spiders' keys are not written, and a second start moves none."""
    assert isinstance(store, MaintainedStore)
    store.commit("spider", "still", None, scheduled(Kind.BASELINE, T0, False))
    for version, at in enumerate((T1, T2), start=1):  # never changes: its interval grows toward the maximum
        store.commit("spider", "still", version, scheduled(Kind.NONE, at, False))
    store.commit("spider", "busy", None, Outcome(Kind.BASELINE, URL, T0, snapshot=encoded(),
                                                 schedule=ScheduleUpdate(False, Bounds(900.0, 900.0))))
    store.commit("spider", "unscheduled", None, Outcome(Kind.BASELINE, URL, T0, snapshot=encoded()))
    store.commit("other", "still", None, Outcome(Kind.BASELINE, URL, T0, snapshot=encoded(),
                                                 schedule=ScheduleUpdate(False, Bounds(900.0, 900.0))))
    before = store.due_entries("spider", ["still", "busy", "unscheduled"])
    still, busy = before["still"], before["busy"]
    assert still.interval is not None and still.due_at is not None and busy.interval == 900.0

    assert store.bound_schedule("spider", 900.0, 7 * 86400.0) == 0  # nothing set under other bounds
    assert store.due_entries("spider", ["still"])["still"] == still

    assert store.bound_schedule("spider", 1800.0, 5.0 * 3600) == 2  # a narrower range: both keys move
    after = store.due_entries("spider", ["still", "busy", "unscheduled"])
    assert after["still"].interval == 5.0 * 3600 and after["busy"].interval == 1800.0
    assert after["still"].due_at == pytest.approx(still.due_at - still.interval + 5.0 * 3600, abs=1.5)
    assert after["busy"].due_at == pytest.approx(epoch(T0) + 1800.0, abs=1.5)  # type: ignore[operator]
    assert after["unscheduled"].due_at is None and store.due_entries("other", ["still"])["still"].interval == 900.0
    assert after["still"].last_seen == still.last_seen  # nothing but the schedule moves
    assert store.bound_schedule("spider", 1800.0, 5.0 * 3600) == 0  # said once: the next start moves none
    # an interval computed at a bound is that bound, give or take a rounding: not moved again
    assert store.bound_schedule("spider", 1800.0 * (1 + 1e-12), 5.0 * 3600 * (1 - 1e-12)) == 0


def _with_evidence(at: str, body: bytes, change: bool = False) -> Outcome:
    return Outcome(Kind.FIELD if change else Kind.BASELINE, URL, at, snapshot=encoded(),
                   record={"kind": "field"} if change else None,
                   http=HttpValidators(url=URL, key="", etag='"e"', size=10),
                   evidence=Evidence(URL, 200, '{"Content-Type":["text/html"]}', keep_body(body)))


def test_forgetting_deletes_a_key_neither_fetched_nor_listed_since(store: Store) -> None:
    assert isinstance(store, MaintainedStore)
    store.commit("spider", "removed", None, _with_evidence(T0, b"<p>old</p>"))
    committed = store.commit("spider", "removed", 1, _with_evidence(T1, b"<p>new</p>", change=True),
                             lease=Lease("o", 60))
    store.commit("spider", "skipped", None, _with_evidence(T0, b"<p>skipped</p>"))
    store.commit("spider", "fresh", None, _with_evidence(T2, b"<p>fresh</p>"))
    store.commit("other", "removed", None, _with_evidence(T0, b"<p>other</p>"))
    store.mark_listed("spider", ["skipped", "not-stored"], T2)
    assert store.due_entries("spider", ["skipped"])["skipped"].listed_at == epoch(T2)

    late = "2999-01-01T00:00:00Z"
    assert store.forget("spider", T2, 500, bodies_before=late) == ["removed"]  # last fetched at T1, never listed
    assert store.read("spider", "removed") is None and store.validators("spider", URL) != []
    assert {v.key for v in store.validators("spider", URL)} == {"skipped", "fresh"}
    assert sorted(store.due_entries("spider", ["removed", "skipped", "fresh"])) == ["fresh", "skipped"]
    assert store.read("other", "removed") is not None  # another spider's keys are its own
    assert [c.id for c in store.changes("spider")] == [committed.change_id]  # its logged change stays
    found = store.change_evidence(committed.change_id or 0)
    assert found is not None and found.before is None and found.after is None  # its evidence went with it
    assert store.forget("spider", T2, 500, bodies_before=late) == []
    # added back: a fresh baseline
    assert store.commit("spider", "removed", None, _with_evidence(T2, b"<p>new</p>")).version == 1


def test_forgetting_goes_in_bounded_batches(store: Store) -> None:
    assert isinstance(store, MaintainedStore)
    for n in range(7):
        store.commit("spider", f"k{n}", None, Outcome(Kind.BASELINE, URL, T0, snapshot=encoded()))
    batches = []
    while forgotten := store.forget("spider", T1, 3, bodies_before=T1):
        batches.append(len(forgotten))
    assert batches == [3, 3, 1] and store.keys("spider") == []


def test_thirty_simulated_days_of_scheduled_runs(store: Store) -> None:
    """Hourly runs, the key due read from the store each time, as the schedule middleware does:
    a daily page is fetched about daily, a page that never changes drifts to the longest interval."""
    assert isinstance(store, MaintainedStore)
    start = datetime(2024, 1, 1, tzinfo=UTC)
    versions: dict[str, int] = {}
    fetches = {"daily": 0, "still": 0}
    for hour in range(30 * 24):
        now = start + timedelta(hours=hour)
        table = store.due_entries("spider", list(fetches))
        for key in fetches:
            if not decide(table.get(key), now.timestamp(), every=None, adaptive=True).due:
                continue
            page = hour // 24 if key == "daily" else 0
            state = store.read("spider", key)
            changed = state is not None and versions[key] != page
            kind = Kind.BASELINE if state is None else Kind.FIELD if changed else Kind.NONE
            store.commit("spider", key, state.version if state else None,
                         scheduled(kind, now.strftime("%Y-%m-%dT%H:%M:%SZ"), changed))
            versions[key] = page
            fetches[key] += 1
    table = store.due_entries("spider", list(fetches))
    assert table["still"].interval == BOUNDS.maximum and fetches["still"] <= 9
    assert 20 <= fetches["daily"] <= 75 and (table["daily"].interval or 0) <= 1.5 * 86400
