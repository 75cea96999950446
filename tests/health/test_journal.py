"""The health check against a real store (changewatch.health.journal): conditions logged once per
streak, their end logged, a store with no history, observations from a clock ahead."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from changewatch.core.comparisons import Kind
from changewatch.health.check import HealthThresholds
from changewatch.health.journal import run_check
from changewatch.store import Lease, Outcome
from changewatch.store.health import HistoryQuery
from changewatch.store.semantics import format_time, parse_time
from changewatch.store.sqlite import SQLiteStore

LIMITS = HealthThresholds(recent=86400, baseline=3 * 86400, min_observations=3, stale_after=2 * 86400)
DAY0 = parse_time("2024-05-01T08:00:00Z")
LEASE = Lease("host:test:1:2:n", 60)


def commit(store: SQLiteStore, key: str, kind: Kind, day: int, error: str | None = None) -> None:
    state = store.read("watch", key)
    at = format_time(DAY0 + timedelta(days=day))
    store.commit("watch", key, state.version if state else None,
                 Outcome(kind, f"https://shop.example/{key}", at, snapshot=None if error else b"s", error=error))


def test_a_condition_is_logged_once_per_streak_and_its_end_once(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "state.db")
    store.open()
    empty = run_check(store, "watch", DAY0, LIMITS, {}, {}, LEASE)
    assert (empty.rows, empty.logged, empty.holding) == (0, [], [])  # no history yet: says so, no crash
    for day in range(3):
        for key in "ab":
            commit(store, key, Kind.BASELINE if day == 0 else Kind.CONTENT, day)
    for day in range(3, 7):
        for key in "ab":
            commit(store, key, Kind.ERROR, day, error="blocked: captcha")
        result = run_check(store, "watch", DAY0 + timedelta(days=day), LIMITS,
                           {"shop.example": "https://shop.example/a"}, {}, LEASE)
        logged = [entry.record["error"] for entry in result.logged]
        assert logged == (["health: blocked: shop.example answered block pages (captcha, access denied) to 4 of 4 "
                           "fetches over the last 2d, and nothing changed: the watcher is locked out"]
                          if day == 4 else []), day
        assert len(result.holding) == (1 if day >= 4 else 0)
    for key in "ab":
        commit(store, key, Kind.CONTENT, 7)
    result = run_check(store, "watch", DAY0 + timedelta(days=7), LIMITS, {}, {}, LEASE)
    (over,) = result.logged
    assert over.record["kind"] == "recovered" and over.record["url"] == "https://shop.example/"
    assert [c.kind for c in store.changes("watch")] == ["error", "recovered"]
    assert all(c.lease_owner == LEASE.owner for c in store.changes("watch"))
    assert store.conditions("watch") == []
    store.close()


def test_observations_from_a_clock_far_ahead_are_counted_on_the_stores_day(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "state.db")
    store.open()
    store.commit("watch", "k", None, Outcome(Kind.BASELINE, "https://shop.example/", "2999-01-01T00:00:00Z",
                                             snapshot=b"s"))
    (row,) = store.history(HistoryQuery())
    assert row.day <= format_time(store.now() + timedelta(minutes=2))[:10]
    result = run_check(store, "watch", store.now(), LIMITS, {}, {}, LEASE)
    assert result.rows == 1 and result.logged == []
    store.close()
