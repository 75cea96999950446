"""The PostgreSQL store when its database goes away for real (a proxy between the store and the
test server, cut and restored; backends killed with pg_terminate_backend): calls ride out an
outage shorter than ``retry_time``, fail with a StoreError after it, and a commit whose
acknowledgement was lost is neither written twice nor forgotten."""

from __future__ import annotations

import threading
import time
import uuid

import psycopg
import pytest

from changewatch.core.comparisons import Kind
from changewatch.store import Lease, Outcome, StoreError, VersionConflict, store_from_uri
from changewatch.store.postgresql import PostgreSQLStore
from changewatch.store.postgresql.retry import is_transient

from ..pgproxy import PgProxy
from ._support import T0, T1, T2, encoded, outcome
from .conftest import POSTGRESQL

LEASE = Lease("test-owner", 600)


def changed(at: str) -> Outcome:
    return outcome(Kind.CONTENT, encoded(), {"kind": "content"}, at=at)


def _open(proxy: PgProxy, schema: str, **options: str) -> PostgreSQLStore:
    query = "&".join(f"{k}={v}" for k, v in {"schema": schema, "timeout": "5", **options}.items())
    store = store_from_uri(proxy.uri(query))
    assert isinstance(store, PostgreSQLStore)
    store.open()
    return store


def _restore_after(proxy: PgProxy, seconds: float) -> threading.Thread:
    thread = threading.Thread(target=lambda: (time.sleep(seconds), proxy.restore()))
    thread.start()
    return thread


def test_which_failures_are_worth_another_transaction() -> None:
    from psycopg import errors
    from psycopg_pool import PoolTimeout

    transient = [PoolTimeout("no connection"), psycopg.OperationalError("server closed the connection"),
                 errors.SerializationFailure(), errors.DeadlockDetected(), errors.AdminShutdown(),
                 errors.CannotConnectNow(), errors.TooManyConnections()]
    final = [errors.UniqueViolation(), errors.LockNotAvailable(), errors.UndefinedTable(), errors.InvalidPassword(),
             ValueError("no")]
    assert [is_transient(e) for e in transient] == [True] * len(transient)
    assert [is_transient(e) for e in final] == [False] * len(final)


def test_calls_ride_out_a_short_outage(proxy: PgProxy, schema: str) -> None:
    store = _open(proxy, schema, retry_time="20")
    try:
        store.commit("s", "k", None, outcome(Kind.BASELINE, encoded(), at=T0))
        proxy.cut()
        restorer = _restore_after(proxy, 2.0)
        started = time.monotonic()
        committed = store.commit("s", "k", 1, changed(T1), lease=LEASE)
        assert 2.0 <= time.monotonic() - started < 8.0
        restorer.join()
        assert committed.version == 2 and committed.change_id is not None
        assert [c.id for c in store.changes("s")] == [committed.change_id]
        assert store.retries > 0
        proxy.cut()
        restorer = _restore_after(proxy, 1.0)
        state = store.read("s", "k")
        restorer.join()
        assert state is not None and state.version == 2
    finally:
        store.close()


def test_an_outage_longer_than_the_budget_is_a_store_error_and_writes_nothing(proxy: PgProxy, schema: str) -> None:
    store = _open(proxy, schema, retry_time="2")
    try:
        store.commit("s", "k", None, outcome(Kind.BASELINE, encoded(), at=T0))
        proxy.cut()
        started = time.monotonic()
        with pytest.raises(StoreError, match=r"cannot commit an observation of key 'k' \(the database was "
                                             r"unreachable for 2 s\)"):
            store.commit("s", "k", 1, changed(T1), lease=LEASE)
        assert time.monotonic() - started < 6.0
        # the budget is the outage's, not each call's: the next call gives up at once
        started = time.monotonic()
        with pytest.raises(StoreError, match="unreachable"):
            store.read("s", "k")
        assert time.monotonic() - started < 1.5
        proxy.restore()
        time.sleep(1.1)  # past the budget, a store tries the database once a second
        state = store.read("s", "k")  # back: the store works again, and nothing was written
        assert state is not None and state.version == 1 and list(store.changes("s")) == []
    finally:
        store.close()


def test_no_retry_time_means_the_first_failure_is_final(proxy: PgProxy, schema: str) -> None:
    store = _open(proxy, schema, retry_time="0")
    try:
        proxy.cut()
        started = time.monotonic()
        with pytest.raises(StoreError, match="cannot read key 'k'"):
            store.read("s", "k")
        assert time.monotonic() - started < 1.5 and store.retries == 0
    finally:
        store.close()


def test_a_commit_whose_acknowledgement_was_lost_is_returned_not_done_twice(proxy: PgProxy, schema: str) -> None:
    """The server committed; the client only saw its connection die. A blind retry would meet a
    VersionConflict and the crawl would never export the change it logged."""
    store = _open(proxy, schema, retry_time="20")
    try:
        store.commit("s", "k", None, outcome(Kind.BASELINE, encoded(), at=T0))
        proxy.swallow_next_commit_ack.set()
        committed = store.commit("s", "k", 1, changed(T1), lease=LEASE)
        assert proxy.swallowed.is_set() and store.retries >= 1
        assert committed.version == 2 and committed.change_id is not None
        changes = list(store.changes("s"))
        assert [(c.id, c.lease_owner) for c in changes] == [(committed.change_id, LEASE.owner)]
        state = store.read("s", "k")
        assert state is not None and state.version == 2 and state.last_seen == T1
        with pytest.raises(VersionConflict):  # and it is not written again
            store.commit("s", "k", 1, changed(T2))
    finally:
        store.close()


def test_a_commit_that_never_reached_the_server_is_ended_and_done_once(proxy: PgProxy, schema: str) -> None:
    """The COMMIT was lost on the way: the server's backend sits idle in the transaction, holding
    the key's row lock, and would until TCP keepalive noticed (hours). The store ends that
    backend (the transaction aborts) and commits again, within its budget, once."""
    store = _open(proxy, schema, retry_time="10")
    try:
        store.commit("s", "k", None, outcome(Kind.BASELINE, encoded(), at=T0))
        proxy.lose_next_commit.set()
        started = time.monotonic()
        committed = store.commit("s", "k", 1, changed(T1), lease=LEASE)
        assert proxy.swallowed.is_set() and store.retries >= 1
        assert time.monotonic() - started < 10
        assert committed.version == 2 and committed.change_id is not None
        assert [c.id for c in store.changes("s")] == [committed.change_id]
        state = store.read("s", "k")
        assert state is not None and state.version == 2 and state.last_seen == T1
    finally:
        store.close()


@pytest.mark.parametrize("failure", ["swallow_next_commit_ack", "lose_next_commit"])
def test_an_interrupted_claim_returns_what_it_took_once(proxy: PgProxy, schema: str, failure: str) -> None:
    """The COMMIT's answer lost (the server committed), or the COMMIT itself lost (the server's
    backend sits idle in the transaction until the store ends it): either way the claim returns
    what it took, once."""
    store = _open(proxy, schema, retry_time="10")
    try:
        store.commit("s", "k", None, outcome(Kind.BASELINE, encoded(), at=T0))
        logged = store.commit("s", "k", 1, changed(T1))  # no lease: unclaimed
        getattr(proxy, failure).set()
        claimed = store.claim_undelivered("s", LEASE)
        assert proxy.swallowed.is_set()
        assert [c.id for c in claimed] == [logged.change_id]
    finally:
        store.close()


def test_backends_killed_by_the_server_are_replaced(schema: str) -> None:
    name = f"cwtest_{uuid.uuid4().hex[:8]}"
    store = store_from_uri(f"{POSTGRESQL}{'&' if '?' in POSTGRESQL else '?'}schema={schema}&application_name={name}")
    assert isinstance(store, PostgreSQLStore)
    store.open()
    try:
        store.commit("s", "k", None, outcome(Kind.BASELINE, encoded(), at=T0))
        with psycopg.connect(POSTGRESQL, autocommit=True) as admin:
            killed = admin.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                                   "WHERE application_name = %s", (name,)).fetchone()
        assert killed is not None and killed[0] >= 1
        committed = store.commit("s", "k", 1, changed(T1), lease=LEASE)
        assert committed.version == 2 and store.retries >= 1
        assert [c.id for c in store.changes("s")] == [committed.change_id]
    finally:
        store.close()
