"""The store contract, every backend: delivery of the change log and leases on it."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from changewatch.core.comparisons import Kind
from changewatch.store import Lease, LoggedChange, RoutingStore, Store

from ._support import T0, T1, encoded, outcome

SHORT = 0.2  # seconds: a lease a test outlives
LONG = 60.0  # seconds: a lease that outlives a test


def _log(store: Store, n: int, *, spider: str = "spider", lease: Lease | None = None) -> list[int]:
    """Commit *n* new keys, each with a change; their change ids."""
    ids = []
    for i in range(n):
        key = f"k{len(store.keys(spider))}"
        committed = store.commit(spider, key, None, outcome(Kind.FIELD, encoded(), {"kind": "field", "n": i}),
                                 lease=lease)
        assert committed.change_id is not None
        ids.append(committed.change_id)
    return ids


def _ids(changes: list[LoggedChange]) -> list[int]:
    return [c.id for c in changes]


def test_changes_are_undelivered_until_marked(store: Store) -> None:
    ids = _log(store, 3)
    _log(store, 1, spider="other")
    pending = store.undelivered("spider")
    assert [c.record["n"] for c in pending] == [0, 1, 2] and _ids(pending) == ids
    store.mark_delivered("spider", [ids[0], ids[2]], T1)
    assert [c.record["n"] for c in store.undelivered("spider")] == [1]
    store.mark_delivered("spider", [ids[1], 10_000], T1)  # unknown ids are ignored
    assert store.undelivered("spider") == []
    assert len(store.undelivered("other")) == 1  # per spider
    assert store.claim_undelivered("spider", Lease("b", LONG)) == []  # delivered: never claimed


def test_a_change_without_a_lease_is_claimed_once(store: Store) -> None:
    ids = _log(store, 2)
    claimed = store.claim_undelivered("spider", Lease("a", LONG))
    assert _ids(claimed) == ids and {c.lease_owner for c in claimed} == {"a"}
    assert claimed[0].record == {"kind": "field", "n": 0} and claimed[0].kind == "field"
    assert store.claim_undelivered("spider", Lease("b", LONG)) == []
    assert store.claim_undelivered("spider", Lease("a", LONG)) == []  # a holds them already
    assert _ids(store.undelivered("spider")) == ids  # claimed is not delivered
    assert store.lease_owners("spider") == {"a"} and store.lease_owners("other") == set()


def test_a_live_lease_keeps_its_changes_from_other_owners(store: Store) -> None:
    ids = _log(store, 2, lease=Lease("a", LONG))
    assert store.lease_owners("spider") == {"a"}
    assert store.claim_undelivered("spider", Lease("b", LONG)) == []
    assert [c.lease_owner for c in store.undelivered("spider")] == ["a", "a"]
    assert _ids(store.claim_undelivered("spider", Lease("b", LONG), dead_owners={"c"})) == []
    assert _ids(store.claim_undelivered("spider", Lease("b", LONG), dead_owners={"a"})) == ids  # a is dead


def test_an_expired_lease_is_claimed(store: Store) -> None:
    ids = _log(store, 1, lease=Lease("a", SHORT))
    assert store.claim_undelivered("spider", Lease("b", LONG)) == []
    time.sleep(SHORT + 0.15)
    assert store.lease_owners("spider") == set()  # only unexpired leases have owners
    claimed = store.claim_undelivered("spider", Lease("b", LONG))
    assert _ids(claimed) == ids and claimed[0].lease_owner == "b"
    assert store.lease_owners("spider") == {"b"}


def test_renewed_leases_outlive_their_first_expiry(store: Store) -> None:
    _log(store, 2, lease=Lease("a", SHORT))
    _log(store, 1, lease=Lease("z", SHORT))
    assert store.renew_leases("spider", Lease("a", LONG)) == 2
    time.sleep(SHORT + 0.15)
    claimed = store.claim_undelivered("spider", Lease("b", LONG))
    assert [c.record["n"] for c in claimed] == [0]  # z's lease expired; a's were renewed
    assert store.lease_owners("spider") == {"a", "b"}
    assert store.renew_leases("spider", Lease("nobody", LONG)) == 0


def test_released_leases_are_claimable_at_once(store: Store) -> None:
    ids = _log(store, 3, lease=Lease("a", LONG))
    store.release_leases("spider", "a", [ids[1]])
    assert _ids(store.claim_undelivered("spider", Lease("b", LONG))) == [ids[1]]
    store.release_leases("spider", "nobody")
    store.release_leases("spider", "b")  # all of b's, and only b's: a keeps its own
    assert _ids(store.claim_undelivered("spider", Lease("c", LONG))) == [ids[1]]
    store.release_leases("spider", "a")
    assert _ids(store.claim_undelivered("spider", Lease("d", LONG))) == [ids[0], ids[2]]


def test_delivered_changes_are_not_renewed_or_claimed(store: Store) -> None:
    ids = _log(store, 2, lease=Lease("a", SHORT))
    store.mark_delivered("spider", [ids[0]], T0)
    assert _ids(store.undelivered("spider")) == [ids[1]]
    assert store.renew_leases("spider", Lease("a", LONG)) == 1
    store.release_leases("spider", "a")
    assert _ids(store.claim_undelivered("spider", Lease("b", LONG))) == [ids[1]]


def test_two_owners_claiming_at_once_never_share_a_change(new_store: Callable[[], Store]) -> None:
    writer = new_store()
    claimers = [new_store() for _ in range(3)]
    for round_ in range(5):
        ids = _log(writer, 40)
        barrier = threading.Barrier(len(claimers))
        got: dict[str, list[int]] = {}

        def claim(store: Store, owner: str, barrier: threading.Barrier = barrier,
                  got: dict[str, list[int]] = got) -> None:
            barrier.wait()
            got[owner] = _ids(store.claim_undelivered("spider", Lease(owner, LONG)))

        threads = [threading.Thread(target=claim, args=(s, f"owner{round_}-{i}")) for i, s in enumerate(claimers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        every = [i for owned in got.values() for i in owned]
        assert sorted(every) == ids  # all claimed, none twice
        for owner, owned in got.items():
            assert {c.lease_owner for c in writer.undelivered("spider") if c.id in owned} <= {owner}
        writer.mark_delivered("spider", ids, T1)


def test_a_logged_record_keeps_its_members_in_the_order_it_was_exported(store: Store) -> None:
    """A redelivery reads as the first delivery did: members (and nested ones) in their order,
    not sorted (by the store's JSON or by a backend), on every backend; a summary written later
    comes after them, as the first export put it last."""
    record = {"key": "k", "url": "https://s.example/k", "kind": "field", "spider": "spider",
              "observed_at": T0, "changes": {"zeta": {"old": "2", "new": "1"}, "alpha": {"old": "a", "new": "b"}},
              "diff": "- b\n+ a", "added": [{"key": "z", "fields": {"title": "Z", "price": "1"}}]}
    committed = store.commit("spider", "k", None, outcome(Kind.FIELD, encoded(), record), lease=Lease("a", SHORT))
    [logged] = store.undelivered("spider")
    assert list(logged.record) == list(record) and logged.record == record
    assert list(logged.record["changes"]) == ["zeta", "alpha"]
    assert list(logged.record["added"][0]["fields"]) == ["title", "price"]
    time.sleep(SHORT * 2)
    assert isinstance(store, RoutingStore) and store.record_summary("spider", committed.change_id or 0, "Cheaper.")
    [claimed] = store.claim_undelivered("spider", Lease("b", LONG))
    assert claimed.id == committed.change_id and list(claimed.record) == [*record, "summary"]
    assert list(claimed.record["changes"]) == ["zeta", "alpha"]
