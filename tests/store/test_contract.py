"""The store contract, run against every backend."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from changewatch.core.compare import Kind, Snapshot, page_snapshot
from changewatch.core.entities import build_entities
from changewatch.store import HttpValidators, Outcome, Store, StoredState
from changewatch.store.sqlite import SQLiteStore

BACKENDS = ["sqlite"]


def _make(backend: str, tmp_path: Path) -> Callable[[], Store]:
    if backend == "sqlite":
        return lambda: SQLiteStore(tmp_path / "state.db")
    raise AssertionError(backend)


@pytest.fixture(params=BACKENDS)
def new_store(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], Store]:
    return _make(request.param, tmp_path)


@pytest.fixture
def store(new_store: Callable[[], Store]) -> Iterator[Store]:
    s = new_store()
    s.open()
    yield s
    s.close()


def _full_snapshot() -> Snapshot:
    text = page_snapshot("<p>Hello   World</p><p>second line é</p>", None, None, False)
    entities = build_entities([{"key": "/a?utm_source=x", "fields": {"t": "A"}}], base_url="https://s.example/")
    return Snapshot(fields={"price": "89.00"}, norm_fields={"price": "89"}, text=text.text,
                    raw_hash=text.raw_hash, content_hash=text.content_hash,
                    fingerprint=(1 << 63) | 12345, entities=entities)


def _outcome(kind: Kind, snapshot: Snapshot | None = None, record: dict | None = None, *,
             at: str = "2026-11-30T00:00:00Z", error: str | None = None) -> Callable[[StoredState | None], Outcome]:
    return lambda state: Outcome(kind, "https://s.example/p", at, snapshot=snapshot, record=record, error=error)


def test_missing_key_is_none(store: Store) -> None:
    assert store.get("spider", "nothing") is None
    assert store.keys("spider") == []


def test_snapshot_round_trips(store: Store) -> None:
    snap = _full_snapshot()
    store.apply("spider", "k", _outcome(Kind.BASELINE, snap))
    state = store.get("spider", "k")
    assert state is not None
    assert state.snapshot == snap  # every part, including a fingerprint with the top bit set
    assert state.counters == {"baseline": 1}
    assert state.first_seen == state.last_seen == state.last_good == "2026-11-30T00:00:00Z"
    assert state.last_changed is None


def test_change_log_written_with_state(store: Store) -> None:
    store.apply("spider", "k", _outcome(Kind.BASELINE, _full_snapshot()))
    out = store.apply("spider", "k", _outcome(Kind.FIELD, _full_snapshot(), {"kind": "field", "n": 1},
                                              at="2026-11-30T01:00:00Z"))
    assert out.change_id is not None
    logged = list(store.changes("spider"))
    assert [(c.key, c.kind, c.record) for c in logged] == [("k", "field", {"kind": "field", "n": 1})]
    assert logged[0].id == out.change_id
    state = store.get("spider", "k")
    assert state is not None and state.last_changed == "2026-11-30T01:00:00Z"
    assert state.counters == {"baseline": 1, "field": 1}
    assert list(store.changes("spider", after_id=out.change_id)) == []


def test_decide_failure_writes_nothing(store: Store) -> None:
    store.apply("spider", "k", _outcome(Kind.BASELINE, _full_snapshot()))

    def boom(state: StoredState | None) -> Outcome:
        raise RuntimeError("decide failed")

    with pytest.raises(RuntimeError):
        store.apply("spider", "k", boom)
    state = store.get("spider", "k")
    assert state is not None and state.counters == {"baseline": 1}
    # the store is still usable afterwards
    store.apply("spider", "k", _outcome(Kind.NONE))
    assert store.get("spider", "k").counters == {"baseline": 1, "none": 1}  # type: ignore[union-attr]


def test_no_snapshot_keeps_the_baseline(store: Store) -> None:
    snap = _full_snapshot()
    store.apply("spider", "k", _outcome(Kind.BASELINE, snap))
    store.apply("spider", "k", _outcome(Kind.ERROR, None, {"kind": "error"}, error="blocked: x",
                                        at="2026-11-30T02:00:00Z"))
    store.apply("spider", "k", _outcome(Kind.ERROR, None, None, error="blocked: x", at="2026-11-30T03:00:00Z"))
    state = store.get("spider", "k")
    assert state is not None
    assert state.snapshot == snap
    assert state.error_streak == 2 and state.last_error == "blocked: x"
    assert state.last_good == "2026-11-30T00:00:00Z" and state.last_seen == "2026-11-30T03:00:00Z"
    assert state.last_changed is None  # an error is not a change
    store.apply("spider", "k", _outcome(Kind.NONE))
    state = store.get("spider", "k")
    assert state is not None and state.error_streak == 0 and state.last_error is None


def test_spiders_are_namespaced(store: Store) -> None:
    store.apply("a", "k", _outcome(Kind.BASELINE, _full_snapshot()))
    assert store.get("b", "k") is None
    assert store.keys("a") == ["k"] and store.keys("b") == []


def test_state_survives_reopen(new_store: Callable[[], Store]) -> None:
    s = new_store()
    s.open()
    s.apply("spider", "k", _outcome(Kind.BASELINE, _full_snapshot()))
    s.close()
    again = new_store()
    again.open()
    try:
        assert again.get("spider", "k") is not None
    finally:
        again.close()


def test_concurrent_writers_lose_no_update(new_store: Callable[[], Store]) -> None:
    """Two connections (as two processes would have) updating one key: every update counts."""
    stores = [new_store() for _ in range(2)]
    for s in stores:
        s.open()
    errors: list[BaseException] = []

    def work(s: Store) -> None:
        try:
            for _ in range(40):
                s.apply("spider", "k", _outcome(Kind.NONE))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    state = stores[0].get("spider", "k")
    assert state is not None and state.counters == {"none": 80}
    for s in stores:
        s.close()


# -- HTTP validators -------------------------------------------------------------------------------

def _with_http(kind: Kind, url: str, etag: str | None, *, not_modified: bool = False,
               snapshot: Snapshot | None = None, at: str = "2026-11-30T00:00:00Z",
               fail: bool = False) -> Callable[[StoredState | None], Outcome]:
    def decide(state: StoredState | None) -> Outcome:
        http = None if not_modified else HttpValidators(url=url, key="", etag=etag, size=1234, spec="s1")
        outcome = Outcome(kind, url, at, snapshot=snapshot, http=http, not_modified=not_modified,
                          record={"kind": kind.value} if kind.reported else None)
        if fail:
            raise RuntimeError("decide failed")
        return outcome
    return decide


def test_validators_are_written_with_the_observation(store: Store) -> None:
    url = "https://s.example/p"
    assert store.validators("spider", url) == []
    store.apply("spider", "k", _with_http(Kind.BASELINE, url, '"a"', snapshot=_full_snapshot()))
    [v] = store.validators("spider", url)
    assert (v.key, v.etag, v.last_modified, v.size, v.runs, v.spec) == ("k", '"a"', None, 1234, 0, "s1")
    assert v.full_at == "2026-11-30T00:00:00Z"
    assert store.validators("other-spider", url) == []

    store.apply("spider", "k", _with_http(Kind.NONE, url, None, not_modified=True))
    store.apply("spider", "k", _with_http(Kind.NONE, url, None, not_modified=True))
    [v] = store.validators("spider", url)
    assert v.runs == 2 and v.etag == '"a"'
    state = store.get("spider", "k")
    assert state is not None and state.counters["not_modified"] == 2 and state.counters["none"] == 2

    # a new full response replaces them and restarts the count
    store.apply("spider", "k", _with_http(Kind.NONE, url, '"b"', at="2026-12-01T00:00:00Z"))
    [v] = store.validators("spider", url)
    assert (v.etag, v.runs, v.full_at) == ('"b"', 0, "2026-12-01T00:00:00Z")


def test_validators_follow_the_key_and_vanish_without_validators(store: Store) -> None:
    old, new = "https://s.example/old", "https://s.example/new"
    store.apply("spider", "k", _with_http(Kind.BASELINE, old, '"a"', snapshot=_full_snapshot()))
    store.apply("spider", "j", _with_http(Kind.BASELINE, old, '"a"', snapshot=_full_snapshot()))
    assert [v.key for v in store.validators("spider", old)] == ["j", "k"]
    store.apply("spider", "k", _with_http(Kind.NONE, new, '"n"'))  # the key moved
    assert [v.key for v in store.validators("spider", old)] == ["j"]
    assert [v.etag for v in store.validators("spider", new)] == ['"n"']
    store.apply("spider", "k", _with_http(Kind.NONE, new, None))  # the server stopped sending any
    [v] = store.validators("spider", new)
    assert v.etag is None and v.last_modified is None  # kept: "no validators" (a full fetch next time)
    store.forget_validators("spider", new, keep=["j"])
    assert store.validators("spider", new) == []


def test_a_failed_decision_writes_no_validators(store: Store) -> None:
    url = "https://s.example/p"
    store.apply("spider", "k", _with_http(Kind.BASELINE, url, '"a"', snapshot=_full_snapshot()))
    with pytest.raises(RuntimeError):
        store.apply("spider", "k", _with_http(Kind.NONE, url, '"b"', fail=True))
    assert [v.etag for v in store.validators("spider", url)] == ['"a"']


def test_changes_are_undelivered_until_marked(store: Store) -> None:
    for i in range(3):
        store.apply("spider", f"k{i}", _outcome(Kind.FIELD, _full_snapshot(), {"kind": "field", "n": i}))
    store.apply("other", "k", _outcome(Kind.FIELD, _full_snapshot(), {"kind": "field"}))
    pending = store.undelivered("spider")
    assert [c.record["n"] for c in pending] == [0, 1, 2]
    store.mark_delivered("spider", [pending[0].id, pending[2].id], "2026-11-30T01:00:00Z")
    assert [c.record["n"] for c in store.undelivered("spider")] == [1]
    store.mark_delivered("spider", [pending[1].id, 10_000], "2026-11-30T01:00:00Z")  # unknown ids are ignored
    assert store.undelivered("spider") == []
    assert len(store.undelivered("other")) == 1  # per spider
