"""The store contract, run against every backend (tests/store/conftest.py): state, versions,
conflicts, fetch order and clocks. Delivery and leases: test_contract_delivery.py."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import pytest

from changewatch.core.comparisons import Kind
from changewatch.core.comparisons.content_part import ContentPart
from changewatch.store import Outcome, StaleObservation, Store, StoredState, StoreError, VersionConflict
from changewatch.store.runner import StoreRunner, Update
from changewatch.store.semantics import parse_time

from ._support import FINGERPRINT, T0, T1, T2, T3, URL, decoded, encoded, full_snapshot, outcome


def _update(store: Store, key: str, compute: Callable[[StoredState | None], Outcome | None]) -> Update:
    """StoreRunner.update with a compute that needs no await."""
    async def computed(state: StoredState | None) -> Outcome | None:
        return compute(state)
    return asyncio.run(StoreRunner(store).update("spider", key, computed))


def test_missing_key_is_none(store: Store) -> None:
    assert store.read("spider", "nothing") is None
    assert store.keys("spider") == []


def test_snapshot_round_trips_as_bytes(store: Store) -> None:
    data = encoded()
    committed = store.commit("spider", "k", None, outcome(Kind.BASELINE, data))
    assert (committed.version, committed.change_id, committed.observed_at, committed.clamped) == (1, None, T0, False)
    state = store.read("spider", "k")
    assert state is not None and state.snapshot == data and isinstance(state.snapshot, bytes)
    snapshot = decoded(state.snapshot)
    assert snapshot == full_snapshot()  # every part
    content = snapshot.part("content")
    assert isinstance(content, ContentPart) and content.fingerprint == FINGERPRINT
    assert content.text == full_snapshot().parts["content"].text
    assert state.counters == {"baseline": 1} and state.version == 1
    assert state.first_seen == state.last_seen == state.last_good == T0
    assert state.last_changed is None and state.last_error is None and state.error_streak == 0


def test_versions_count_commits(store: Store) -> None:
    for version, at in enumerate((T0, T1, T2), start=1):
        assert store.commit("spider", "k", version - 1 or None, outcome(Kind.NONE, at=at)).version == version
    state = store.read("spider", "k")
    assert state is not None and state.version == 3 and state.counters == {"none": 3}
    assert state.snapshot is None  # never a good snapshot: none kept


def test_change_log_written_with_state(store: Store) -> None:
    store.commit("spider", "k", None, outcome(Kind.BASELINE, encoded()))
    committed = store.commit("spider", "k", 1, outcome(Kind.FIELD, encoded(), {"kind": "field", "n": 1}, at=T1))
    assert committed.change_id is not None and committed.version == 2
    logged = list(store.changes("spider"))
    assert [(c.id, c.key, c.kind, c.observed_at, c.record) for c in logged] == [
        (committed.change_id, "k", "field", T1, {"kind": "field", "n": 1})]
    state = store.read("spider", "k")
    assert state is not None and state.last_changed == T1 and state.last_good == T1
    assert state.counters == {"baseline": 1, "field": 1}
    assert list(store.changes("spider", after_id=committed.change_id)) == []
    assert [c.id for c in store.changes()] == [committed.change_id]  # every spider


def test_a_failed_compute_writes_nothing(store: Store) -> None:
    store.commit("spider", "k", None, outcome(Kind.BASELINE, encoded()))

    def boom(state: StoredState | None) -> Outcome:
        raise RuntimeError("compute failed")

    with pytest.raises(RuntimeError, match="compute failed"):
        _update(store, "k", boom)
    state = store.read("spider", "k")
    assert state is not None and state.counters == {"baseline": 1} and state.version == 1
    update = _update(store, "k", lambda state: outcome(Kind.NONE, at=T1))  # still usable
    assert update.committed is not None and update.committed.version == 2


def test_compute_returning_none_commits_nothing(store: Store) -> None:
    update = _update(store, "k", lambda state: None)
    assert (update.outcome, update.committed, update.stale, update.conflicts) == (None, None, False, 0)
    assert store.read("spider", "k") is None


def test_an_error_keeps_the_snapshot(store: Store) -> None:
    data = encoded()
    store.commit("spider", "k", None, outcome(Kind.BASELINE, data))
    store.commit("spider", "k", 1, outcome(Kind.ERROR, None, {"kind": "error"}, error="blocked: x", at=T1))
    store.commit("spider", "k", 2, outcome(Kind.ERROR, None, None, error="blocked: x", at=T2))
    state = store.read("spider", "k")
    assert state is not None and state.snapshot == data
    assert state.error_streak == 2 and state.last_error == "blocked: x"
    assert state.last_good == T0 and state.last_seen == T2
    assert state.last_changed is None  # an error is not a change
    store.commit("spider", "k", 3, outcome(Kind.NONE, at=T3))
    state = store.read("spider", "k")
    assert state is not None and state.error_streak == 0 and state.last_error is None


def test_spiders_are_namespaced(store: Store) -> None:
    store.commit("a", "k", None, outcome(Kind.BASELINE, encoded()))
    assert store.read("b", "k") is None
    assert store.keys("a") == ["k"] and store.keys("b") == []
    store.commit("b", "k", None, outcome(Kind.BASELINE, encoded()))  # its own version 1


def test_state_survives_reopen(store_uri: str, new_store: Callable[[], Store]) -> None:
    first = new_store()
    first.commit("spider", "k", None, outcome(Kind.BASELINE, encoded()))
    first.close()
    state = new_store().read("spider", "k")
    assert state is not None and state.snapshot == encoded() and state.version == 1


# -- conflicts -------------------------------------------------------------------------------------

def test_two_commits_against_one_version_one_wins(new_store: Callable[[], Store]) -> None:
    a, b = new_store(), new_store()
    a.commit("spider", "k", None, outcome(Kind.BASELINE, encoded()))
    assert a.read("spider", "k").version == b.read("spider", "k").version == 1  # type: ignore[union-attr]
    a.commit("spider", "k", 1, outcome(Kind.FIELD, encoded(), {"by": "a"}, at=T1))
    with pytest.raises(VersionConflict):
        b.commit("spider", "k", 1, outcome(Kind.FIELD, encoded(), {"by": "b"}, at=T1))
    state = b.read("spider", "k")
    assert state is not None and state.version == 2 and state.counters == {"baseline": 1, "field": 1}
    assert [c.record for c in b.changes("spider")] == [{"by": "a"}]


def test_two_inserts_of_a_new_key_one_wins(new_store: Callable[[], Store]) -> None:
    a, b = new_store(), new_store()
    a.commit("spider", "k", None, outcome(Kind.BASELINE, encoded(), {"by": "a"}))
    with pytest.raises(VersionConflict):
        b.commit("spider", "k", None, outcome(Kind.BASELINE, None, {"by": "b"}))
    assert [c.record for c in b.changes("spider")] == [{"by": "a"}]
    assert b.read("spider", "k").snapshot == encoded()  # type: ignore[union-attr]


def _race(writers: list[Store], key: str, expected: int | None) -> list[str]:
    """Release one commit per writer at once; what each got."""
    barrier = threading.Barrier(len(writers))
    results: list[str] = []

    def write(store: Store, name: str) -> None:
        barrier.wait()
        try:
            store.commit("spider", key, expected, outcome(Kind.FIELD, encoded(), {"by": name}, at=T1))
            results.append("won")
        except VersionConflict:
            results.append("conflict")

    threads = [threading.Thread(target=write, args=(s, str(i))) for i, s in enumerate(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sorted(results)


@pytest.mark.parametrize("existing", [False, True], ids=["insert", "update"])
def test_simultaneous_commits_against_one_version_one_wins(new_store: Callable[[], Store], existing: bool) -> None:
    """Writers released at once, many times: exactly one commit per version, one change logged."""
    writers = [new_store(), new_store(), new_store()]
    for round_ in range(20):
        key = f"k{round_}"
        if existing:
            writers[0].commit("spider", key, None, outcome(Kind.BASELINE, encoded()))
        assert _race(writers, key, 1 if existing else None) == ["conflict", "conflict", "won"]
        assert len([c for c in writers[0].changes("spider") if c.key == key]) == 1
        assert writers[1].read("spider", key).version == (2 if existing else 1)  # type: ignore[union-attr]


def test_a_commit_given_the_state_it_read_conflicts_if_the_key_moved(new_store: Callable[[], Store]) -> None:
    """commit(previous=...) may skip reading the key again: a write conditional on the version
    still refuses a key that moved since, and writes nothing."""
    store, other = new_store(), new_store()
    store.commit("spider", "k", None, outcome(Kind.BASELINE, encoded()))
    read = store.read("spider", "k")
    assert read is not None and read.version == 1
    other.commit("spider", "k", 1, outcome(Kind.NONE, at=T1))
    with pytest.raises(VersionConflict):
        store.commit("spider", "k", 1, outcome(Kind.FIELD, encoded(), {"kind": "field"}, at=T2), previous=read)
    assert all(c.record != {"kind": "field"} for c in store.changes("spider"))  # nothing logged
    fresh = store.read("spider", "k")
    assert fresh is not None and fresh.version == 2
    store.commit("spider", "k", 2, outcome(Kind.FIELD, encoded(), {"kind": "field"}, at=T2), previous=fresh)
    after = store.read("spider", "k")
    assert after is not None and after.version == 3
    assert after.counters == {"baseline": 1, "none": 1, "field": 1}


def test_update_recomputes_after_a_conflict(new_store: Callable[[], Store]) -> None:
    store, other = new_store(), new_store()
    store.commit("spider", "k", None, outcome(Kind.BASELINE, encoded()))
    seen: list[int | None] = []

    async def compute(state: StoredState | None) -> Outcome:
        seen.append(state.version if state else None)
        if len(seen) == 1:  # another process commits while this one computes
            other.commit("spider", "k", 1, outcome(Kind.NONE, at=T1))
        return outcome(Kind.FIELD, encoded(), {"kind": "field"}, at=T2)

    update = asyncio.run(StoreRunner(store).update("spider", "k", compute))
    assert seen == [1, 2] and update.conflicts == 1 and not update.stale
    assert update.committed is not None and update.committed.version == 3
    assert update.outcome is not None and update.outcome.record == {"kind": "field"}
    assert [c.record for c in store.changes("spider")] == [{"kind": "field"}]  # logged once
    assert store.read("spider", "k").counters == {"baseline": 1, "none": 1, "field": 1}  # type: ignore[union-attr]


def test_update_gives_up_when_every_attempt_conflicts(new_store: Callable[[], Store]) -> None:
    store, other = new_store(), new_store()

    async def compute(state: StoredState | None) -> Outcome:
        version = state.version if state else None
        other.commit("spider", "k", version, outcome(Kind.NONE, at=T0))
        return outcome(Kind.NONE, at=T0)

    with pytest.raises(StoreError, match="'k'"):
        asyncio.run(StoreRunner(store).update("spider", "k", compute, attempts=3))
    assert store.read("spider", "k").version == 3  # type: ignore[union-attr]  # only the other's commits


def test_threads_updating_one_key_lose_no_update(new_store: Callable[[], Store]) -> None:
    """Two connections (as two processes would have) updating one key: every update counts."""
    stores = [new_store(), new_store()]
    conflicts: list[int] = []

    def work(store: Store) -> None:
        for _ in range(40):
            conflicts.append(_update(store, "k", lambda state: outcome(Kind.NONE)).conflicts)

    threads = [threading.Thread(target=work, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(conflicts) == 80
    state = stores[0].read("spider", "k")
    assert state is not None and state.counters == {"none": 80} and state.version == 80


# -- fetch order and clocks ------------------------------------------------------------------------

def test_an_older_observation_is_stale_and_writes_nothing(store: Store) -> None:
    store.commit("spider", "k", None, outcome(Kind.BASELINE, encoded(), at=T1))
    store.commit("spider", "k", 1, outcome(Kind.FIELD, encoded(), {"n": 1}, at=T2))
    with pytest.raises(StaleObservation):
        store.commit("spider", "k", 2, outcome(Kind.FIELD, None, {"n": 2}, at=T1, url="https://s.example/old"))
    state = store.read("spider", "k")
    assert state is not None and state.version == 2 and state.last_seen == T2 and state.url.endswith("/p")
    assert [c.record for c in store.changes("spider")] == [{"n": 1}]
    update = _update(store, "k", lambda state: outcome(Kind.FIELD, None, {"n": 3}, at=T0))
    assert update.stale and update.committed is None and update.outcome is None
    assert len(list(store.changes("spider"))) == 1


def test_equal_fetch_times_are_not_stale(store: Store) -> None:
    store.commit("spider", "k", None, outcome(Kind.BASELINE, encoded(), at=T1))
    assert store.commit("spider", "k", 1, outcome(Kind.NONE, at=T1)).version == 2
    # the same moment written another way is the same moment
    assert store.commit("spider", "k", 2, outcome(Kind.NONE, at="2024-05-01T01:00:00+00:00")).version == 3


def test_a_fetch_time_ahead_of_the_store_is_clamped(store: Store, caplog: pytest.LogCaptureFixture) -> None:
    ahead = (datetime.now(UTC) + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    store.commit("spider", "k", None, outcome(Kind.BASELINE, encoded(), at=T0))

    async def compute(state: StoredState | None) -> Outcome:
        return outcome(Kind.FIELD, encoded(), {"kind": "field", "observed_at": ahead}, at=ahead)

    with caplog.at_level(logging.WARNING):
        update = asyncio.run(StoreRunner(store).update("spider", "k", compute))
    committed = update.committed
    assert committed is not None and committed.clamped and committed.observed_at != ahead
    stored = parse_time(committed.observed_at)
    assert abs(stored - store.now()) < timedelta(seconds=30)
    state = store.read("spider", "k")
    assert state is not None and state.last_seen == state.last_good == state.last_changed == committed.observed_at
    [change] = store.changes("spider")
    assert change.observed_at == change.record["observed_at"] == committed.observed_at
    assert update.outcome is not None and update.outcome.observed_at == committed.observed_at
    assert update.outcome.record == {"kind": "field", "observed_at": committed.observed_at}
    [warning] = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert "'k'" in warning.getMessage() and ahead in warning.getMessage()
    assert committed.observed_at in warning.getMessage()
    # a correct clock's next fetch is not stale against the clamped time
    later = (stored + timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert store.commit("spider", "k", 2, outcome(Kind.NONE, at=later)).version == 3


def test_a_fetch_time_within_the_tolerance_is_kept(store: Store, caplog: pytest.LogCaptureFixture) -> None:
    soon = (datetime.now(UTC) + timedelta(seconds=20)).strftime("%Y-%m-%dT%H:%M:%SZ")
    with caplog.at_level(logging.WARNING):
        committed = store.commit("spider", "k", None, outcome(Kind.BASELINE, encoded(), at=soon))
    assert committed.observed_at == soon and not committed.clamped
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_the_last_observation_and_the_age_of_the_content_are_kept_apart_from_the_snapshot(store: Store) -> None:
    """``last_observed`` moves with every observation of the page (a 304, an unchanged page, a
    noisy page) and not with an error; ``content_since`` moves with new content only (a first
    snapshot, a change), not with a snapshot noise or learning rewrote."""
    t_error, t_noise, t_noisy = "2024-05-01T02:30:00Z", "2024-05-01T02:40:00Z", "2024-05-01T02:50:00Z"
    steps = [(None, outcome(Kind.ERROR, error="timeout: no answer"), None, None),  # before any page: nothing
             (1, outcome(Kind.BASELINE, encoded(), at=T0), T0, T0),
             (2, outcome(Kind.NONE, at=T1), T1, T0),
             (3, Outcome(Kind.NONE, URL, T2, not_modified=True), T2, T0),
             (4, outcome(Kind.ERROR, error="http: HTTP 500", at=t_error), T2, T0),
             (5, outcome(Kind.NOISE, encoded(), at=t_noise), t_noise, T0),
             (6, outcome(Kind.ERROR, encoded(), error="noisy: every line varies", at=t_noisy), t_noisy, T0),
             (7, outcome(Kind.FIELD, encoded(), {"kind": "field"}, at=T3), T3, T3)]
    for version, step, observed, since in steps:
        store.commit("spider", "k", version, step)
        state = store.read("spider", "k")
        assert state is not None and (state.last_observed, state.content_since) == (observed, since), step
    assert state.last_good == T3 and state.last_seen == T3
