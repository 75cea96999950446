"""Contract: ``replace_snapshot`` (SnapshotStore), on every backend — the rewrite of a key's snapshot
that ``changewatch noise`` and ``-a forget=`` make: conditional on the version, like a commit;
the key's times, counters and change log untouched."""

from __future__ import annotations

import pytest

from changewatch.core.comparisons import Kind
from changewatch.store import SnapshotStore, Store, VersionConflict

from ._support import T0, T1, encoded, outcome


def test_replace_snapshot_bumps_the_version_and_nothing_else(store: Store) -> None:
    assert isinstance(store, SnapshotStore)
    store.commit("spider", "k", None, outcome(Kind.BASELINE, encoded()))
    store.commit("spider", "k", 1, outcome(Kind.CONTENT, encoded(), {"kind": "content"}, at=T1))
    before = store.read("spider", "k")
    assert before is not None
    assert store.replace_snapshot("spider", "k", 2, b"new snapshot") == 3
    after = store.read("spider", "k")
    assert after is not None and after.snapshot == b"new snapshot" and after.version == 3
    assert (after.counters, after.first_seen, after.last_seen, after.last_good, after.last_changed) == (
        before.counters, T0, T1, T1, T1)
    assert [c.kind for c in store.changes("spider")] == ["content"]


def test_replace_snapshot_conflicts_when_the_key_moved(store: Store) -> None:
    assert isinstance(store, SnapshotStore)
    store.commit("spider", "k", None, outcome(Kind.BASELINE, encoded()))
    store.commit("spider", "k", 1, outcome(Kind.NONE, at=T1))
    with pytest.raises(VersionConflict):
        store.replace_snapshot("spider", "k", 1, b"stale")
    with pytest.raises(VersionConflict):
        store.replace_snapshot("spider", "absent", 1, b"none")
    with pytest.raises(VersionConflict):
        store.replace_snapshot("other spider", "k", 2, b"namespaced")
    state = store.read("spider", "k")
    assert state is not None and state.snapshot == encoded() and state.version == 2
