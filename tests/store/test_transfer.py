"""Moving a whole store between backends (``export_rows`` → ``import_rows``), every pair of
backends: every row and column arrives, ids keep their order, leases are dropped, an occupied
target is refused, and a failed import leaves the target empty."""

from __future__ import annotations

import dataclasses
import sqlite3
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from changewatch.core.comparisons import Kind
from changewatch.core.evidence import keep_body
from changewatch.core.schedule import Bounds, ScheduleUpdate
from changewatch.store import (
    TRANSFER_TABLES,
    ChangeQuery,
    Evidence,
    HttpValidators,
    Lease,
    Outcome,
    RoutingStore,
    StoreCounts,
    StoreError,
    TransferableStore,
    TransferBatch,
    store_from_uri,
)
from changewatch.store.sqlite import SQLiteStore

from ._support import T0, T1, T2, encoded, outcome
from .conftest import drop_postgresql_schema, postgresql_schema_uri

Dump = dict[str, list[tuple[Any, ...]]]
Fresh = Callable[[str], TransferableStore]
#: PostgreSQL is a real server: slow, so SQLite to SQLite stays in the fast lane
BACKENDS = ("sqlite", pytest.param("postgresql", marks=pytest.mark.slow))


@pytest.fixture
def fresh(tmp_path: Path) -> Iterator[Fresh]:
    """Opens a new, empty store of a backend; every one is closed (and its schema dropped) after."""
    with fresh_stores(tmp_path) as make:
        yield make


@contextmanager
def fresh_stores(tmp_path: Path) -> Iterator[Fresh]:
    """:func:`fresh`'s stores, closed when the block ends (once per Hypothesis example: each
    PostgreSQL store holds its connections while it is open)."""
    opened: list[TransferableStore] = []
    schemas: list[str] = []

    def make(backend: str) -> TransferableStore:
        if backend == "sqlite":
            uri = f"sqlite:///{tmp_path}/store-{len(opened)}.db"
        else:
            name, uri = postgresql_schema_uri()
            schemas.append(name)
        store = store_from_uri(uri)
        assert isinstance(store, TransferableStore)
        store.open()
        opened.append(store)
        return store

    try:
        yield make
    finally:
        for store in opened:
            store.close()
        for name in schemas:
            drop_postgresql_schema(name)


def dump(store: TransferableStore) -> Dump:
    out: Dump = {table: [] for table in TRANSFER_TABLES}
    for table, rows in store.export_rows(batch_size=3):
        out[table] += rows
    return out


def fill(store: TransferableStore) -> list[int]:
    """Keys of two spiders with every kind of state: snapshots, errors and their streak, validators
    (one key with none), counters of 304s; changes delivered, undelivered and leased. Change ids."""
    ids = []
    store.commit("shop", "p1", None, Outcome(Kind.BASELINE, "https://s.example/1", T0, snapshot=encoded(),
                 http=HttpValidators(url="https://s.example/1", key="", etag='W/"é1"', last_modified="Wed, "
                                     "01 May 2024 00:00:00 GMT", size=1234, spec="s1",
                                     render='{"v":1,"options":"é","deps":[]}'),
                 schedule=ScheduleUpdate(False, Bounds(900, 86400)),
                 evidence=Evidence("https://s.example/1", 200, '{"Content-Type":["text/html"]}',
                                   keep_body("<p>prix: 89,00 €</p>".encode()))))
    store.commit("shop", "p1", 1, Outcome(Kind.NONE, "https://s.example/1", T1, not_modified=True))
    for at, version in ((T1, None), (T2, 1)):
        committed = store.commit("shop", "p2", version, outcome(Kind.ERROR, None, {"kind": "error", "at": at}, at=at,
                                                                error="blocked: 403"), lease=Lease("host:x:1:2:n", 60))
        assert committed.change_id is not None
        ids.append(committed.change_id)
    news = dataclasses.replace(outcome(Kind.FIELD, encoded(), {"kind": "field", "v": "€"}),
                               notify=(("d1", "json://h.example/x"), ("d2", "mailto://u:****@m.example")))
    committed = store.commit("news", "ünï ' \"", None, news)
    assert committed.change_id is not None
    ids.append(committed.change_id)
    store.mark_delivered("shop", ids[:1], "2024-06-01T00:00:00Z")
    assert isinstance(store, RoutingStore)
    store.claim_notifications(["d1", "d2"], "host:x:1:2:n", 60)
    store.settle_notifications("d1", ids[-1:], "host:x:1:2:n", sent_at="2024-06-02T00:00:00Z")
    store.settle_notifications("d2", ids[-1:], "host:x:1:2:n", sent_at=None, error="http: 500")
    store.add_spend("2024-06-02", 0.125, None)
    return ids


def expected_counts() -> StoreCounts:
    return StoreCounts({"news": 1, "shop": 2}, 1, 3, 2, 4, 1)  # health: baseline, none, blocked, field


@pytest.mark.parametrize("source", BACKENDS)
@pytest.mark.parametrize("target", BACKENDS)
def test_everything_arrives(fresh: Fresh, source: str, target: str) -> None:
    a, b = fresh(source), fresh(target)
    ids = fill(a)
    b.import_rows(a.export_rows(batch_size=2))
    assert dump(b) == dump(a)
    assert b.counts() == a.counts() == expected_counts()
    for key in ("p1", "p2"):
        assert b.read("shop", key) == a.read("shop", key)
    assert b.validators("shop", "https://s.example/1") == a.validators("shop", "https://s.example/1")
    entries = list(b.query_changes(ChangeQuery()))
    assert [e.id for e in entries] == ids
    assert [e.delivered_at for e in entries] == ["2024-06-01T00:00:00Z", None, None]
    assert b.lease_owners("shop") == set()  # leases are dropped: the next crawl claims at once
    assert [c.id for c in b.claim_undelivered("shop", Lease("next", 60))] == ids[1:2]
    later = b.commit("news", "new", None, outcome(Kind.FIELD, encoded(), {"kind": "field"}))
    assert later.change_id is not None and later.change_id > max(ids)
    assert b.read("news", "new") is not None and b.read("shop", "p2").version == 2  # type: ignore[union-attr]
    keys = a.keys("shop")
    assert keys and b.due_entries("shop", keys) == a.due_entries("shop", keys)  # type: ignore[attr-defined]
    evidence = b.change_evidence(ids[2])  # type: ignore[attr-defined]
    assert evidence is not None and evidence.after is None  # (a change of news: the kept version is shop's)


@pytest.mark.parametrize("target", BACKENDS)
def test_an_occupied_target_is_refused_untouched(fresh: Fresh, target: str) -> None:
    a, b = fresh("sqlite"), fresh(target)
    fill(a)
    b.commit("other", "k", None, outcome(Kind.BASELINE, encoded()))
    before = dump(b)
    with pytest.raises(StoreError, match=r"is not empty \(1 keys, 0 validators, 0 changes\).*never merges"):
        b.import_rows(a.export_rows())
    assert dump(b) == before


@pytest.mark.parametrize("target", BACKENDS)
def test_a_failure_half_way_leaves_the_target_empty(fresh: Fresh, target: str) -> None:
    a, b = fresh("sqlite"), fresh(target)
    fill(a)

    def failing() -> Iterator[TransferBatch]:
        batches = list(a.export_rows(batch_size=1))
        yield from batches[:-1]  # every table has rows written when it fails
        raise StoreError("the source went away")

    with pytest.raises(StoreError, match="the source went away"):
        b.import_rows(failing())
    assert b.counts() == StoreCounts({}, 0, 0, 0)
    b.import_rows(a.export_rows())  # nothing was left behind
    assert dump(b) == dump(a)


@pytest.mark.slow  # the test PostgreSQL server
def test_a_row_postgresql_cannot_hold_fails_the_whole_import(fresh: Fresh, tmp_path: Path) -> None:
    a = fresh("sqlite")
    for n in range(50):
        a.commit("shop", f"k{n:03}", None, outcome(Kind.FIELD, encoded(), {"kind": "field"}))
    a.commit("shop", "z\x00", None, outcome(Kind.FIELD, encoded(), {"kind": "field"}))  # a NUL: SQLite text only
    b = fresh("postgresql")
    with pytest.raises(StoreError, match="import a migrated store"):
        b.import_rows(a.export_rows(batch_size=10))
    assert b.counts() == StoreCounts({}, 0, 0, 0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_column_is_transferred_or_deliberately_not(fresh: Fresh, backend: str) -> None:
    """A column added to a schema must be added to TRANSFER_TABLES (or here, with its reason)."""
    store = fresh(backend)
    # a lease or a claim names a process of the old store's crawls
    not_transferred = {"changes": {"lease_owner", "lease_expires"}, "notifications": {"claim_owner", "claim_expires"}}
    for table, columns in TRANSFER_TABLES.items():
        assert set(columns) | not_transferred.get(table, set()) == _columns(store, table), table


def _columns(store: TransferableStore, table: str) -> set[str]:
    if isinstance(store, SQLiteStore):
        return {row[1] for row in store.db.execute(f"PRAGMA table_info({table})")}
    import psycopg

    with psycopg.connect(store.uri) as conn:
        rows = conn.execute("SELECT column_name FROM information_schema.columns WHERE table_schema = %s "
                            "AND table_name = %s", (store.schema, table)).fetchall()  # type: ignore[attr-defined]
    return {row[0] for row in rows}


def test_the_export_is_one_snapshot(fresh: Fresh) -> None:
    a = fresh("sqlite")
    fill(a)
    exporting = a.export_rows(batch_size=1)
    first = next(exporting)
    writer = sqlite3.connect(str(a.path), timeout=5)  # type: ignore[attr-defined]
    writer.execute("INSERT INTO changes (spider, key, kind, observed_at, record) VALUES ('x','y','field','t','{}')")
    writer.commit()
    writer.close()
    rest = list(exporting)
    assert sum(len(rows) for table, rows in [first, *rest] if table == "changes") == 3


# -- the round trip, as a property -------------------------------------------------------------------------------

_TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=12)
_TIME = st.sampled_from([T0, T1, T2, None])
_KEY_ROW = st.tuples(st.sampled_from(["a", "b", "ä"]), _TEXT, _TEXT, st.integers(1, 2**40),
                     st.one_of(st.none(), st.binary(max_size=40)), st.just('{"none":1}'), _TIME, _TIME, _TIME, _TIME,
                     st.one_of(st.none(), _TEXT), st.integers(0, 1000),
                     # schedule, due_at, due_interval, listed_at, last_observed, content_since
                     st.one_of(st.none(), _TEXT), _TIME, st.one_of(st.none(), st.floats(1, 1e7)), _TIME, _TIME, _TIME)


@st.composite
def _stores(draw: st.DrawFn) -> Dump:
    observations = draw(st.lists(_KEY_ROW, max_size=8, unique_by=lambda r: (r[0], r[1])))
    validators = [(spider, f"https://s.example/{n}", key, draw(st.one_of(st.none(), _TEXT)), draw(_TIME),
                   draw(st.integers(0, 2**40)), draw(_TIME), draw(st.integers(0, 100)), draw(st.none() | _TEXT),
                   draw(st.none() | _TEXT), draw(st.none() | _TEXT))  # ... spec, render, links
                  for n, (spider, key, *_) in enumerate(observations) if draw(st.booleans())]
    ids = sorted(draw(st.sets(st.integers(1, 10_000), max_size=8)))
    changes = [(i, draw(st.sampled_from(["a", "b"])), draw(_TEXT), draw(st.sampled_from(["field", "error"])), T0,
                '{"v":' + str(i) + "}", draw(_TIME)) for i in ids]
    history = draw(st.lists(st.tuples(st.sampled_from(["a", "b"]), _TEXT, st.sampled_from(["2024-05-01", "2024-05-02"]),
                                      st.sampled_from(["none", "noise", "blocked"]), st.integers(1, 2**30),
                                      st.integers(0, 100), st.integers(0, 6400), st.integers(0, 64)),
                            max_size=6, unique_by=lambda r: r[:4]))
    conditions = draw(st.lists(st.tuples(st.sampled_from(["a", "b"]), _TEXT, st.sampled_from(["noise", "stale"]),
                                         _TIME.filter(bool), _TEXT, st.one_of(st.none(), st.integers(1, 10_000))),
                               max_size=4, unique_by=lambda r: r[:3]))
    notifications = [(i, destination, spider, f"json://{destination}.example/x", draw(_TIME), draw(st.integers(0, 9)),
                      draw(st.none() | _TEXT), draw(_TIME))
                     for i, spider, *_ in changes for destination in ("d1", "d2") if draw(st.booleans())]
    spend = [(day, draw(st.sampled_from([0.0, 0.125, 3.5])), draw(st.integers(0, 99)))
             for day in ("2024-05-01", "2024-05-02") if draw(st.booleans())]
    body = st.tuples(st.sampled_from(["a", "b"]), st.text("0123456789abcdef", min_size=1, max_size=8),
                     st.sampled_from(["zstd", "zlib"]), st.integers(0, 2**40), st.sampled_from([T0, T1]),
                     st.binary(min_size=1, max_size=40))
    bodies = draw(st.lists(body, max_size=4, unique_by=lambda r: (r[0], r[1])))
    versions = [(i, spider, draw(_TEXT), draw(st.one_of(st.none(), st.integers(1, 10_000))), T0, draw(_TEXT),
                 draw(st.integers(100, 599)), '{"Content-Type":["text/html"]}', digest, draw(st.integers(0, 1)))
                for i, (spider, digest, *_) in enumerate(bodies, start=1)]
    pages = draw(st.lists(st.tuples(st.sampled_from(["a", "b"]), _TEXT, _TEXT), max_size=6, unique_by=lambda r: r))
    sets = draw(st.lists(st.tuples(st.sampled_from(["a", "b"]), _TEXT, _TEXT), max_size=3, unique_by=lambda r: r[:2]))
    return {"observations": sorted(observations, key=lambda r: (r[0].encode(), r[1].encode())),
            "validators": sorted(validators, key=lambda r: (r[0].encode(), r[1].encode(), r[2].encode())),
            "changes": changes,
            "health_history": sorted(history, key=lambda r: tuple(v.encode() for v in r[:4])),
            "health_conditions": sorted(conditions, key=lambda r: tuple(v.encode() for v in r[:3])),
            "notifications": notifications, "summary_spend": spend,
            "evidence_bodies": sorted(bodies, key=lambda r: (r[0].encode(), r[1].encode())),
            "evidence": versions,
            "site_pages": sorted(pages, key=lambda r: tuple(v.encode() for v in r)),
            "site_sets": sorted(sets, key=lambda r: tuple(v.encode() for v in r[:2]))}


@pytest.mark.slow  # the test PostgreSQL server
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=_stores(), route=st.sampled_from([("sqlite", "postgresql", "sqlite"), ("postgresql", "sqlite",
                                                                                      "postgresql")]))
def test_a_round_trip_through_every_backend_changes_nothing(tmp_path: Path, rows: Dump,
                                                             route: tuple[str, str, str]) -> None:
    with fresh_stores(Path(tempfile.mkdtemp(dir=tmp_path))) as fresh:
        first, second, third = (fresh(backend) for backend in route)
        first.import_rows((table, table_rows) for table, table_rows in rows.items())
        second.import_rows(first.export_rows(batch_size=2))
        third.import_rows(second.export_rows(batch_size=3))
        assert dump(first) == dump(second) == dump(third) == rows
