"""The store contract, every backend: notifications' delivery state (written with the change,
claimed, settled), summaries written into the change log, and the day's summary spend."""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable

import pytest

from changewatch.core.comparisons import Kind
from changewatch.store import RoutingStore, Store, StoreError, VersionConflict

from ._support import T0, T1, T2, encoded, outcome

A, B = ("dest-a", "json://a.example/hook"), ("dest-b", "mailto://u:****@mail.example")


def _log(store: Store, key: str, at: str, *, notify: tuple[tuple[str, str], ...] = (A, B),
         spider: str = "spider") -> int:
    state = store.read(spider, key)
    change = dataclasses.replace(outcome(Kind.FIELD, encoded(), {"kind": "field", "key": key, "at": at}, at=at),
                                 notify=notify)
    committed = store.commit(spider, key, state.version if state else None, change)
    assert committed.change_id is not None
    return committed.change_id


def routing(store: Store) -> RoutingStore:
    assert isinstance(store, RoutingStore)
    return store


def test_a_change_is_logged_with_a_pending_notification_per_destination(store: Store) -> None:
    first, second = _log(store, "k1", T0), _log(store, "k2", T1, notify=(A,))
    _log(store, "k3", T1, notify=())
    states = routing(store).notification_states()
    assert [(s.change_id, s.destination, s.shown) for s in states] == [(first, *A), (first, *B), (second, *A)]
    assert {(s.key, s.kind, s.sent_at, s.attempts, s.last_error) for s in states} == {
        ("k1", "field", None, 0, None), ("k2", "field", None, 0, None)}


def test_a_commit_that_conflicts_writes_no_notification(store: Store) -> None:
    _log(store, "k", T0)
    with pytest.raises(VersionConflict):
        store.commit("spider", "k", None, dataclasses.replace(outcome(Kind.FIELD, encoded(), {"kind": "field"}),
                                                             notify=(A,)))
    assert len(routing(store).notification_states()) == 2


def test_claimed_notifications_are_for_their_owner_until_settled(store: Store) -> None:
    ids = [_log(store, f"k{i}", at) for i, at in enumerate((T0, T1, T2))]
    r = routing(store)
    claimed = r.claim_notifications(["dest-a"], "owner-1", 60)
    assert [c.change_id for c in claimed] == ids and {c.destination for c in claimed} == {"dest-a"}
    assert claimed[0].record == {"kind": "field", "key": "k0", "at": T0} and claimed[0].key == "k0"
    assert r.claim_notifications(["dest-a"], "owner-2", 60) == []  # held
    assert [c.change_id for c in r.claim_notifications(["dest-a"], "owner-1", 60)] == ids  # its own, again
    assert len(r.claim_notifications(["dest-b"], "owner-2", 60)) == 3  # another destination's state is its own
    r.settle_notifications("dest-a", ids[:2], "owner-1", sent_at="2024-06-01T00:00:00Z")
    r.settle_notifications("dest-a", ids[2:], "owner-1", sent_at=None, error="http: 500 from a.example")
    pending = {(s.change_id, s.destination): s for s in r.notification_states()}
    assert (ids[0], "dest-a") not in pending and (ids[1], "dest-a") not in pending
    failed = pending[(ids[2], "dest-a")]
    assert failed.attempts == 1 and failed.last_error == "http: 500 from a.example" and failed.sent_at is None
    sent = [s for s in r.notification_states(pending=False) if s.sent_at]
    assert {(s.change_id, s.attempts) for s in sent} == {(ids[0], 1), (ids[1], 1)}
    # a failed one is pending again, for anyone: the next run retries it
    assert [c.change_id for c in r.claim_notifications(["dest-a"], "owner-2", 60)] == [ids[2]]


def test_claims_expire_filter_by_spider_and_time_and_are_limited(store: Store) -> None:
    _log(store, "k0", T0)
    late = _log(store, "k1", T2)
    other = _log(store, "k0", T1, spider="other")
    r = routing(store)
    assert [c.change_id for c in r.claim_notifications(["dest-a"], "o", 60, spider="spider", since=T1)] == [late]
    assert [c.change_id for c in r.claim_notifications(["dest-b"], "o", 60, limit=1)] == [1]
    assert [(c.change_id, c.spider) for c in r.claim_notifications(["dest-a"], "p", 0.2, spider="other")] == [
        (other, "other")]
    time.sleep(0.5)
    assert [c.change_id for c in r.claim_notifications(["dest-a"], "q", 60, spider="other")] == [other]  # expired
    assert r.claim_notifications([], "q", 60) == [] and r.claim_notifications(["nowhere"], "q", 60) == []
    assert [s.change_id for s in r.notification_states(spider="other")] == [other, other]
    assert {s.change_id for s in r.notification_states(since=T2)} == {late}


def test_settling_counts_once_and_ignores_another_owner(store: Store) -> None:
    change = _log(store, "k", T0, notify=(A,))
    r = routing(store)
    r.claim_notifications(["dest-a"], "owner-1", 60)
    r.settle_notifications("dest-a", [change], "owner-2", sent_at="2024-06-01T00:00:00Z")  # not its claim
    assert r.notification_states()[0].sent_at is None
    r.settle_notifications("dest-a", [change], "owner-1", sent_at="2024-06-01T00:00:00Z")
    r.settle_notifications("dest-a", [change], "owner-1", sent_at="2024-06-02T00:00:00Z")  # sent: stays as it was
    [state] = r.notification_states(pending=False)
    assert state.sent_at == "2024-06-01T00:00:00Z" and state.attempts == 1
    r.settle_notifications("dest-a", [], "owner-1", sent_at=None, error="x")


def test_two_claims_at_once_never_take_one_notification(new_store: Callable[[], Store]) -> None:
    first = new_store()
    for i in range(60):
        _log(first, f"k{i}", T0, notify=(A,))
    stores = [routing(new_store()) for _ in range(4)]
    taken: list[list[int]] = [[] for _ in stores]

    def claim(n: int) -> None:
        while batch := stores[n].claim_notifications(["dest-a"], f"owner-{n}", 60, limit=7):
            taken[n] += [c.change_id for c in batch]
            stores[n].settle_notifications("dest-a", [c.change_id for c in batch], f"owner-{n}",
                                           sent_at="2024-06-01T00:00:00Z")

    threads = [threading.Thread(target=claim, args=(n,)) for n in range(len(stores))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    every = [i for ids in taken for i in ids]
    assert len(every) == len(set(every)) == 60


def test_a_summary_is_written_into_the_logged_record(store: Store) -> None:
    change = _log(store, "k", T0)
    r = routing(store)
    assert r.record_summary("spider", change, "The price fell from 89 to 79 — «cheaper».")
    [logged] = [c for c in store.changes("spider") if c.id == change]
    assert logged.record == {"kind": "field", "key": "k", "at": T0,
                             "summary": "The price fell from 89 to 79 — «cheaper»."}
    assert r.claim_notifications(["dest-a"], "o", 60)[0].record["summary"].startswith("The price fell")
    assert not r.record_summary("spider", change + 100, "x") and not r.record_summary("other", change, "x")


def test_the_day_s_spend_is_shared_and_never_passes_the_budget(new_store: Callable[[], Store]) -> None:
    stores = [routing(new_store()) for _ in range(4)]
    allowed: list[bool] = []
    lock = threading.Lock()

    def spend(n: int) -> None:
        for _ in range(10):
            ok = stores[n].add_spend("2026-11-30", 0.25, 5.0)
            with lock:
                allowed.append(ok)

    threads = [threading.Thread(target=spend, args=(n,)) for n in range(len(stores))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert allowed.count(True) == 20 and allowed.count(False) == 20  # 5.0 / 0.25, whoever asked
    assert stores[0].spend("2026-11-30") == (5.0, 20)
    assert stores[0].spend("2026-12-01") == (0.0, 0)  # a new day starts at nothing
    assert stores[0].add_spend("2026-11-30", -0.5, None, calls=0)  # a correction after the answer's usage
    assert stores[1].spend("2026-11-30") == (4.5, 20)
    assert stores[1].add_spend("2026-11-30", 0.5, 5.0) and not stores[1].add_spend("2026-11-30", 0.01, 5.0)
    assert stores[2].add_spend("2026-12-02", 3.0, None) and stores[2].spend("2026-12-02") == (3.0, 1)


def test_a_closed_store_says_so(store: Store) -> None:
    store.close()
    with pytest.raises(StoreError):
        routing(store).claim_notifications(["dest-a"], "o", 60)


def test_every_attempt_is_counted(store: Store) -> None:
    """A send that took three attempts (the try and two retries) counts three, failed or sent."""
    change = _log(store, "k", T0, notify=(A,))
    r = routing(store)
    r.claim_notifications(["dest-a"], "owner-1", 60)
    r.settle_notifications("dest-a", [change], "owner-1", sent_at=None, error="http: 500", attempts=3)
    [failed] = r.notification_states()
    assert failed.attempts == 3 and failed.last_error == "http: 500"
    r.claim_notifications(["dest-a"], "owner-2", 60)
    r.settle_notifications("dest-a", [change], "owner-2", sent_at="2024-06-01T00:00:00Z", attempts=2)
    [sent] = r.notification_states(pending=False)
    assert sent.attempts == 5 and sent.sent_at == "2024-06-01T00:00:00Z"


def test_discarded_notifications_are_recorded_and_never_claimed_again(store: Store) -> None:
    first, second, third = _log(store, "k0", T0), _log(store, "k1", T1), _log(store, "k2", T2, notify=(A,))
    r = routing(store)
    r.claim_notifications(["dest-b"], "owner-1", 60)  # held by a sender: discarded all the same
    # by its shown form (as listed and as the crawl's warning names it), or by its id
    assert r.discard_notifications(B[1], "2024-07-01T00:00:00Z") == 2
    assert r.discard_notifications("dest-b", "2024-07-02T00:00:00Z") == 0  # nothing left pending: known, none
    assert r.discard_notifications("json://nowhere.example/", "2024-07-02T00:00:00Z") is None  # never a destination
    assert {(s.change_id, s.destination) for s in r.notification_states()} == {
        (first, "dest-a"), (second, "dest-a"), (third, "dest-a")}
    discarded = [s for s in r.notification_states(pending=False) if s.discarded_at]
    assert {(s.change_id, s.destination, s.discarded_at, s.sent_at) for s in discarded} == {
        (first, "dest-b", "2024-07-01T00:00:00Z", None), (second, "dest-b", "2024-07-01T00:00:00Z", None)}
    assert r.claim_notifications(["dest-b"], "owner-2", 60) == []
    assert r.claim_notifications(["dest-b"], "owner-1", 60) == []  # its claim went with them
    # a sender that held them and settles late records what it did; they stay discarded
    r.settle_notifications("dest-b", [first], "owner-1", sent_at=None, error="http: 500", attempts=3)
    assert [s.destination for s in r.notification_states() if s.change_id == first] == ["dest-a"]


def test_discarding_every_destination_before_a_time(store: Store) -> None:
    early, late = _log(store, "k0", T0), _log(store, "k1", T2)
    other = _log(store, "k0", T0, spider="other")
    r = routing(store)
    assert r.discard_notifications(None, "2024-07-01T00:00:00Z", before=T1, spider="spider") == 2  # dest-a and -b
    assert {(s.change_id, s.destination) for s in r.notification_states()} == {
        (late, "dest-a"), (late, "dest-b"), (other, "dest-a"), (other, "dest-b")}
    assert r.discard_notifications(None, "2024-07-01T00:00:00Z", before=T2) == 2  # the other spider's: T0 < T2
    assert {s.change_id for s in r.notification_states()} == {late}
    assert r.discard_notifications(None, "2024-07-01T00:00:00Z", before=T0) == 0
    assert {s.change_id for s in r.notification_states(pending=False) if s.discarded_at} == {early, other}
