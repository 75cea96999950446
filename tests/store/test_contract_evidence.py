"""The store contract, every backend: evidence is written in the observation's commit (or not at
all), a body once per spider and digest, and read back as a change's before and after; the
retention purges keep each key's latest version, never a body a version refers to, never an
undelivered change."""

from __future__ import annotations

import pytest

from changewatch.core.comparisons import Kind
from changewatch.core.evidence import decompress, keep_body
from changewatch.store import Evidence, Lease, MaintainedStore, Outcome, StaleObservation, Store, VersionConflict

from ._support import T0, T1, T2, T3, encoded

URL = "https://s.example/p"
HEADERS = '[["Content-Type","text/html; charset=utf-8"],["ETag","\\"v\\""]]'


def kept(kind: Kind, at: str, body: bytes | None, *, record: bool = False) -> Outcome:
    evidence = Evidence(URL, 200, HEADERS, keep_body(body)) if body is not None else None
    return Outcome(kind, URL, at, snapshot=None if kind is Kind.ERROR else encoded(),
                   record={"kind": kind.value} if record else None, error="blocked" if kind is Kind.ERROR else None,
                   evidence=evidence)


def maintained(store: Store) -> MaintainedStore:
    assert isinstance(store, MaintainedStore)
    return store


def test_a_change_has_its_before_and_after_as_served(store: Store) -> None:
    upkeep = maintained(store)
    store.commit("spider", "k", None, kept(Kind.BASELINE, T0, b"<p>Price: 89.00</p>"))
    store.commit("spider", "k", 1, kept(Kind.NONE, T1, None))  # other runs keep nothing more
    change = store.commit("spider", "k", 2, kept(Kind.FIELD, T2, b"<p>Price: 79.00</p>", record=True),
                          lease=Lease("o", 60))
    assert change.change_id is not None
    found = upkeep.change_evidence(change.change_id)
    assert found is not None and found.change.id == change.change_id and found.change.kind == "field"
    assert found.before is not None and found.after is not None
    assert (found.before.observed_at, found.after.observed_at) == (T0, T2)
    assert found.after.change_id == change.change_id and found.before.change_id is None
    for version, body in ((found.before, b"<p>Price: 89.00</p>"), (found.after, b"<p>Price: 79.00</p>")):
        assert version.body is not None and version.compression is not None
        assert decompress(version.compression, version.body) == body and version.size == len(body)
        assert (version.url, version.status, version.headers) == (URL, 200, HEADERS)
    assert upkeep.change_evidence(10_000) is None  # no such change


def test_an_unchanged_body_is_kept_once(store: Store) -> None:
    maintained(store)
    body = b"<p>the same bytes</p>"
    store.commit("spider", "k", None, kept(Kind.BASELINE, T0, body))
    store.commit("spider", "k", 1, kept(Kind.NONE, T1, body))  # a re-baseline of the same page
    store.commit("spider", "other", None, kept(Kind.BASELINE, T0, body))
    assert store.counts().evidence == 3  # type: ignore[attr-defined]
    assert _bodies(store) == 1  # referred to by digest


def test_a_commit_that_does_not_happen_keeps_no_evidence(store: Store) -> None:
    store.commit("spider", "k", None, kept(Kind.BASELINE, T1, b"<p>one</p>"))
    with pytest.raises(VersionConflict):
        store.commit("spider", "k", None, kept(Kind.BASELINE, T2, b"<p>two</p>"))
    with pytest.raises(StaleObservation):
        store.commit("spider", "k", 1, kept(Kind.FIELD, T0, b"<p>three</p>", record=True))
    assert store.counts().evidence == 1 and _bodies(store) == 1  # type: ignore[attr-defined]


def test_the_evidence_of_an_error_change_is_the_version_before_it(store: Store) -> None:
    upkeep = maintained(store)
    store.commit("spider", "k", None, kept(Kind.BASELINE, T0, b"<p>ok</p>"))
    error = store.commit("spider", "k", 1, kept(Kind.ERROR, T1, None, record=True))
    found = upkeep.change_evidence(error.change_id or 0)
    assert found is not None and found.after is None and found.before is not None and found.before.observed_at == T0


def test_retention_keeps_each_keys_latest_version(store: Store) -> None:
    upkeep = maintained(store)
    shared = b"<p>v0, and the page of another key</p>"
    store.commit("spider", "k", None, kept(Kind.BASELINE, T0, shared))
    first = store.commit("spider", "k", 1, kept(Kind.FIELD, T1, b"<p>v1</p>", record=True))
    second = store.commit("spider", "k", 2, kept(Kind.FIELD, T2, b"<p>v2</p>", record=True))
    store.commit("spider", "still", None, kept(Kind.BASELINE, T0, b"<p>still</p>"))
    store.commit("spider", "twin", None, kept(Kind.BASELINE, T0, shared))
    late = "2999-01-01T00:00:00Z"
    assert upkeep.purge_evidence("spider", T3, 500, bodies_before=late) == 2  # k's v0 and v1; v2 and the others stay
    assert upkeep.purge_evidence("spider", T3, 500, bodies_before=late) == 0
    assert _bodies(store) == 3  # v1's went with it; v0's stays: twin refers to it
    later = upkeep.change_evidence(second.change_id or 0)
    assert later is not None and later.after is not None and later.after.body is not None
    assert later.before is None  # its before expired
    earlier = upkeep.change_evidence(first.change_id or 0)
    assert earlier is not None and earlier.after is None and earlier.before is None


def test_a_body_stored_again_meanwhile_is_never_purged(store: Store) -> None:
    """A purge deletes a body only if it was last stored before *bodies_before*: a commit in
    flight that refers to it again moved its stored_at on (PostgreSQL: the purge waits for it)."""
    upkeep = maintained(store)
    store.commit("spider", "k", None, kept(Kind.BASELINE, T0, b"<p>v0</p>"))
    store.commit("spider", "k", 1, kept(Kind.FIELD, T1, b"<p>v1</p>", record=True))
    assert upkeep.purge_evidence("spider", T3, 500, bodies_before="2000-01-01T00:00:00Z") == 1
    assert _bodies(store) == 2


def test_a_body_goes_with_the_last_version_that_refers_to_it(store: Store) -> None:
    upkeep = maintained(store)
    store.commit("spider", "k", None, kept(Kind.BASELINE, T0, b"<p>v0</p>"))
    store.commit("spider", "k", 1, kept(Kind.FIELD, T1, b"<p>v1</p>", record=True))
    store.commit("spider", "twin", None, kept(Kind.BASELINE, T0, b"<p>v0</p>"))  # the same bytes
    late = "2999-01-01T00:00:00Z"
    assert upkeep.purge_evidence("spider", late, 500, bodies_before=late) == 1  # k's v0: twin still refers to it
    assert _bodies(store) == 2
    assert upkeep.forget("spider", late, 500, bodies_before=late) == ["k", "twin"]
    assert _bodies(store) == 0


def test_only_delivered_changes_are_purged(store: Store) -> None:
    upkeep = maintained(store)
    store.commit("spider", "k", None, kept(Kind.BASELINE, T0, b"<p>v0</p>"))
    ids = []
    for version, at in ((1, T1), (2, T2), (3, T3)):
        ids.append(store.commit("spider", "k", version, kept(Kind.FIELD, at, None, record=True)).change_id or 0)
    store.mark_delivered("spider", ids[:2], T3)
    assert upkeep.purge_changes("spider", T2, 500) == 1  # fetched before T2 and delivered: the first only
    assert upkeep.purge_changes("spider", "2999-01-01T00:00:00Z", 500) == 1  # the second; the third is undelivered
    assert [c.id for c in store.changes("spider")] == ids[2:]
    assert upkeep.purge_changes("other", "2999-01-01T00:00:00Z", 500) == 0


def _bodies(store: Store) -> int:
    from changewatch.store.sqlite import SQLiteStore

    if isinstance(store, SQLiteStore):
        return int(store.db.execute("SELECT count(*) FROM evidence_bodies").fetchone()[0])
    with store._cursor("count bodies") as cur:  # type: ignore[attr-defined]
        cur.execute(f"SELECT count(*) FROM {store._quoted}.evidence_bodies")  # type: ignore[attr-defined]
        return int(cur.fetchone()[0])
