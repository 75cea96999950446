"""The SQLite store's schema: a new store is created at the first released schema, in one
statement; a store of an older released schema is upgraded by the steps appended to
``MIGRATIONS`` (the tests append their own after the shipped ones); a newer one is refused untouched.
(A development build's store: test_development_stores.py.)"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from changewatch.core.comparisons import Kind
from changewatch.store import OlderSchema, Outcome, StoreError
from changewatch.store.semantics import FIRST_SCHEMA
from changewatch.store.sqlite import SQLiteStore
from changewatch.store.sqlite.schema import MIGRATIONS, schema_version

from .test_postgresql import BEFORE_101, TIMES
from .test_sqlite import open_at_once

T0, T1 = "2024-01-01T00:00:00Z", "2024-01-02T00:00:00Z"
#: the schema this code writes: the first released one brought up by the shipped steps
SHIPPED = schema_version()

TABLES = ["changes", "changewatch_meta", "evidence", "evidence_bodies", "health_conditions", "health_history",
          "notifications", "observations", "site_pages", "site_sets", "snapshots", "sqlite_sequence", "summary_spend",
          "validators"]


def _meta_version(path: Path) -> str:
    with sqlite3.connect(path) as db:
        value: str = db.execute("SELECT value FROM changewatch_meta WHERE name='schema_version'").fetchone()[0]
    return value


def _columns(path: Path, table: str) -> list[str]:
    with sqlite3.connect(path) as db:
        return [r[1] for r in db.execute(f"PRAGMA table_info({table})")]


def _store_with_a_key(path: Path) -> None:
    store = SQLiteStore(path)
    store.open()
    store.commit("spider", "k", None, Outcome(Kind.BASELINE, "https://s.example/k", T0, snapshot=b"s"))
    store.close()


def test_a_new_store_is_created_at_the_first_released_schema_and_brought_up(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    SQLiteStore(path).open()
    assert FIRST_SCHEMA > 8  # above every development build's, so that none can pass as current
    assert SHIPPED == FIRST_SCHEMA + len(MIGRATIONS) > FIRST_SCHEMA
    assert _meta_version(path) == str(SHIPPED)
    with sqlite3.connect(path) as db:
        assert sorted(r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")) == TABLES
        assert db.execute("SELECT value FROM changewatch_meta WHERE name='app'").fetchone() == ("changewatch",)
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert _columns(path, "observations")[-6:] == ["schedule", "due_at", "due_interval", "listed_at",
                                                   "last_observed", "content_since"]
    assert _columns(path, "validators")[-2:] == ["render", "links"]
    assert _columns(path, "notifications")[-1] == "discarded_at"


def test_a_store_before_discards_keeps_its_pending_notifications_through_the_upgrade(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Schema 102 records discarded notifications: a store of 101 is upgraded with its pending
    notification still pending, and the partial index of pending ones covers the new column."""
    path = tmp_path / "state.db"
    with monkeypatch.context() as first:
        first.setattr("changewatch.store.sqlite.schema.MIGRATIONS", MIGRATIONS[:1])
        store = SQLiteStore(path)
        store.open()
        store.commit("spider", "k", None, Outcome(Kind.FIELD, "https://s.example/k", T0, snapshot=b"s",
                                                  record={"kind": "field"}, notify=(("dest", "json://d.example/"),)))
        store.close()
    assert _meta_version(path) == str(FIRST_SCHEMA + 1) and "discarded_at" not in _columns(path, "notifications")
    store = SQLiteStore(path)
    store.open()
    try:
        assert _meta_version(path) == str(SHIPPED)
        [state] = store.notification_states()
        assert (state.destination, state.sent_at, state.discarded_at) == ("dest", None, None)
        index = store.db.execute("SELECT sql FROM sqlite_master WHERE name = 'notifications_pending'").fetchone()[0]
        assert "discarded_at IS NULL" in index
        assert store.discard_notifications("dest", T1) == 1 and store.notification_states() == []
    finally:
        store.close()


def test_a_store_before_kept_links_keeps_its_validators_through_the_upgrade(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Schema 103 keeps a link-mode site page's links with its validators: a store of 102 is
    upgraded with its validators as they were, and no links (the page's next fetch is full)."""
    path = tmp_path / "state.db"
    with monkeypatch.context() as first:
        first.setattr("changewatch.store.sqlite.schema.MIGRATIONS", MIGRATIONS[:2])
        SQLiteStore(path).open()
    with sqlite3.connect(path) as db:  # a row as that schema's code wrote it
        db.execute("INSERT INTO validators (spider, url, key, etag, size, runs) "
                   "VALUES ('spider', 'https://s.example/k', 'k', ?, 10, 0)", ('"a"',))
    assert _meta_version(path) == str(FIRST_SCHEMA + 2) and "links" not in _columns(path, "validators")
    store = SQLiteStore(path)
    store.open()
    try:
        assert _meta_version(path) == str(SHIPPED)
        [row] = store.validators("spider", "https://s.example/k")
        assert (row.etag, row.links) == ('"a"', None)
    finally:
        store.close()


def test_a_keys_snapshot_lives_apart_and_goes_with_its_key(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    _store_with_a_key(path)
    store = SQLiteStore(path)
    store.open()
    try:
        assert store.db.execute("SELECT count(*) FROM observations WHERE snapshot IS NOT NULL").fetchone()[0] == 0
        assert store.db.execute("SELECT snapshot FROM snapshots").fetchone()[0] == b"s"
        store.db.execute("DELETE FROM observations")  # whatever deletes a key deletes its snapshot
        assert store.db.execute("SELECT count(*) FROM snapshots").fetchone()[0] == 0
    finally:
        store.close()


def _backfill(db: sqlite3.Connection) -> None:
    db.execute("UPDATE observations SET note = 'filled'")


#: the next schema changes, as they would be appended: SQL, then a function
NEXT_STEPS = ["ALTER TABLE observations ADD COLUMN note TEXT; CREATE INDEX observations_by_note ON observations (note)",
              _backfill]


def older_released_store(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A store of the released schema holding a key and a logged change, made older than this
    code's by a next step appended to ``MIGRATIONS`` (until *monkeypatch* undoes it)."""
    store = SQLiteStore(path)
    store.open()
    store.commit("spider", "k", None, Outcome(Kind.FIELD, "https://s.example/k", T0, snapshot=b"s",
                                              record={"kind": "field", "key": "k"}))
    store.close()
    monkeypatch.setattr("changewatch.store.sqlite.schema.MIGRATIONS", [*MIGRATIONS, *NEXT_STEPS])


def test_the_next_schema_change_is_one_step_appended(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    released = tmp_path / "released.db"
    _store_with_a_key(released)
    monkeypatch.setattr("changewatch.store.sqlite.schema.MIGRATIONS", [*MIGRATIONS, *NEXT_STEPS])
    assert schema_version() == SHIPPED + 2
    store = SQLiteStore(released)
    store.open()
    try:
        assert _meta_version(released) == str(SHIPPED + 2)
        assert [tuple(r) for r in store.db.execute("SELECT note FROM observations")] == [("filled",)]
        assert store.commit("spider", "k", 1, Outcome(Kind.NONE, "https://s.example/k", T1)).version == 2
    finally:
        store.close()
    new = tmp_path / "new.db"  # created at FIRST_SCHEMA and brought up by the same steps
    SQLiteStore(new).open()
    assert _meta_version(new) == str(SHIPPED + 2) and "note" in _columns(new, "observations")


def test_an_older_released_store_is_upgraded_only_when_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    path = tmp_path / "state.db"
    _store_with_a_key(path)
    monkeypatch.setattr("changewatch.store.sqlite.schema.MIGRATIONS", [*MIGRATIONS, *NEXT_STEPS])
    before = path.read_bytes()
    with pytest.raises(OlderSchema, match=rf"has store schema {SHIPPED}, older than this changewatch's "
                                          rf"\({SHIPPED + 2}\)"):
        SQLiteStore(path).open_existing()
    assert path.read_bytes() == before
    store = SQLiteStore(path)
    store.open_existing(upgrade=True)
    store.close()
    assert _meta_version(path) == str(SHIPPED + 2)


def test_a_failed_step_leaves_the_store_as_it_was(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "state.db"
    _store_with_a_key(path)
    monkeypatch.setattr("changewatch.store.sqlite.schema.MIGRATIONS",
                        [*MIGRATIONS, "ALTER TABLE observations ADD COLUMN note TEXT; CREATE TABLE snapshots (x)"])
    with pytest.raises(StoreError, match=rf"upgrade it from schema {SHIPPED} to {SHIPPED + 1}"):
        SQLiteStore(path).open()
    assert _meta_version(path) == str(SHIPPED) and "note" not in _columns(path, "observations")


def test_crawls_opening_an_older_store_at_once_upgrade_it_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    paths = [tmp_path / f"state{i}.db" for i in range(5)]
    for path in paths:
        _store_with_a_key(path)
    monkeypatch.setattr("changewatch.store.sqlite.schema.MIGRATIONS", [*MIGRATIONS, *NEXT_STEPS])
    for path in paths:
        assert open_at_once(path) == []
        assert _meta_version(path) == str(SHIPPED + 2) and _columns(path, "observations").count("note") == 1


def test_a_newer_schema_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    _store_with_a_key(path)
    with sqlite3.connect(path) as db:
        db.execute(f"UPDATE changewatch_meta SET value='{SHIPPED + 1}' WHERE name='schema_version'")
    db.close()
    before = path.read_bytes()
    with pytest.raises(StoreError) as caught:
        SQLiteStore(path).open()
    message = str(caught.value)
    assert str(path) in message and f"schema {SHIPPED + 1}, newer" in message and f"({SHIPPED})" in message
    assert path.read_bytes() == before


def test_schema_101_backfills_the_last_observation_and_the_age_of_the_content(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "state.db"
    monkeypatch.setattr("changewatch.store.sqlite.schema.MIGRATIONS", [])
    SQLiteStore(path).open()
    assert _meta_version(path) == str(FIRST_SCHEMA)
    with sqlite3.connect(path) as db:
        for (key, *times, error), _ in BEFORE_101:
            db.execute("INSERT INTO observations (spider, key, url, version, first_seen, last_seen, last_good, "
                       "last_changed, last_error) VALUES ('s', ?, 'u', 1, ?, ?, ?, ?, ?)",
                       (key, *(TIMES[t] for t in times), error))
    db.close()
    monkeypatch.setattr("changewatch.store.sqlite.schema.MIGRATIONS", MIGRATIONS)
    store = SQLiteStore(path)
    store.open()
    try:
        assert _meta_version(path) == str(SHIPPED)
        for (key, *_), (observed, since) in BEFORE_101:
            state = store.read("s", key)
            assert state is not None and (state.last_observed, state.content_since) == (TIMES[observed],
                                                                                        TIMES[since]), key
    finally:
        store.close()
