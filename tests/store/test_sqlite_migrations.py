"""Stores written by earlier changewatch versions open as the current schema, in place; newer ones are
refused untouched. The old schemas are built here with the DDL those versions shipped."""

from __future__ import annotations

import sqlite3
import zlib
from pathlib import Path

import pytest

from changewatch.core.comparisons import Kind
from changewatch.core.comparisons.content_part import ContentPart
from changewatch.core.comparisons.entities import EntitiesPart
from changewatch.core.comparisons.fields import FieldsPart
from changewatch.store import Outcome, StoreError, sqlite_schema
from changewatch.store.health import HistoryQuery
from changewatch.store.sqlite import SCHEMA_VERSION, SQLiteStore

from ._support import FINGERPRINT, decoded
from .test_sqlite import open_at_once

SCHEMA_1 = """
CREATE TABLE changewatch_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE observations (
    spider TEXT NOT NULL, key TEXT NOT NULL, url TEXT NOT NULL, fields TEXT, entities TEXT, text BLOB,
    raw_hash TEXT, content_hash TEXT, fingerprint INTEGER, http TEXT NOT NULL DEFAULT '{}',
    counters TEXT NOT NULL DEFAULT '{}', first_seen TEXT, last_seen TEXT, last_good TEXT, last_changed TEXT,
    last_error TEXT, error_streak INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (spider, key)
);
CREATE TABLE changes (
    id INTEGER PRIMARY KEY AUTOINCREMENT, spider TEXT NOT NULL, key TEXT NOT NULL, kind TEXT NOT NULL,
    observed_at TEXT NOT NULL, record TEXT NOT NULL
);
CREATE INDEX changes_by_key ON changes (spider, key, id);
"""

SCHEMA_2 = SCHEMA_1 + """
ALTER TABLE changes ADD COLUMN delivered_at TEXT;
CREATE INDEX changes_undelivered ON changes (spider, id) WHERE delivered_at IS NULL;
CREATE TABLE IF NOT EXISTS validators (
    spider TEXT NOT NULL, url TEXT NOT NULL, key TEXT NOT NULL, etag TEXT, last_modified TEXT,
    size INTEGER NOT NULL DEFAULT 0, full_at TEXT, runs INTEGER NOT NULL DEFAULT 0, spec TEXT,
    PRIMARY KEY (spider, url, key)
);
CREATE INDEX IF NOT EXISTS validators_by_key ON validators (spider, key);
"""

TEXT = "Hello World\nsecond line é"
SIGNED_FINGERPRINT = FINGERPRINT - (1 << 64)  # schema 2 stored the 64 bits as a signed integer


def _old_store(path: Path, schema: str, version: int) -> None:
    db = sqlite3.connect(path)
    db.executescript(schema)
    db.executemany("INSERT INTO changewatch_meta VALUES (?, ?)", [("app", "changewatch"),
                                                                  ("schema_version", str(version))])
    db.execute("INSERT INTO observations (spider, key, url, fields, counters, first_seen, last_seen, last_good, "
               "last_changed) VALUES (?,?,?,?,?,?,?,?,?)",
               ("spider", "fields-only", "https://s.example/f", '{"raw": {"a": "1.00"}, "norm": {"a": "1"}}',
                '{"baseline": 1, "field": 2}', "2024-01-01T00:00:00Z", "2024-01-03T00:00:00Z",
                "2024-01-03T00:00:00Z", "2024-01-02T00:00:00Z"))
    db.execute("INSERT INTO observations (spider, key, url, entities, text, raw_hash, content_hash, fingerprint, "
               "counters, last_seen, last_error, error_streak) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
               ("spider", "page", "https://s.example/p", '{"https://s.example/a": {"fields": {"t": "A"}}}',
                zlib.compress(TEXT.encode()), "r1", "c1", SIGNED_FINGERPRINT, '{"baseline": 1, "error": 1}',
                "2024-01-03T00:00:00Z", "blocked: x", 1))
    db.execute("INSERT INTO observations (spider, key, url, counters, last_error, error_streak) VALUES (?,?,?,?,?,?)",
               ("other", "errors-only", "https://o.example/", '{"error": 3}', "timeout", 3))
    db.execute("INSERT INTO changes (spider, key, kind, observed_at, record) VALUES (?,?,?,?,?)",
               ("spider", "fields-only", "field", "2024-01-02T00:00:00Z", '{"kind": "field"}'))
    if version >= 2:
        db.execute("UPDATE changes SET delivered_at='2024-01-02T01:00:00Z'")  # exported by a feed
        db.execute("INSERT INTO changes (spider, key, kind, observed_at, record) VALUES (?,?,?,?,?)",
                   ("spider", "page", "error", "2024-01-03T00:00:00Z", '{"kind": "error"}'))  # undelivered
        db.execute("INSERT INTO validators (spider, url, key, etag, size, full_at, runs) VALUES (?,?,?,?,?,?,?)",
                   ("spider", "https://s.example/p", "page", '"e1"', 120, "2024-01-01T00:00:00Z", 4))
    db.commit()
    db.close()


def _schema_version(store: SQLiteStore) -> str:
    value: str = store.db.execute("SELECT value FROM changewatch_meta WHERE name='schema_version'").fetchone()[0]
    return value


def store_at(path: Path, version: int, *rows: str) -> None:
    """A new store at schema *version*, as that version of changewatch created it (a store is
    created at schema 3 and brought up by the same steps that upgrade one), holding *rows* (SQL)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sqlite_schema, "SCHEMA_VERSION", version)
        store = SQLiteStore(path)
        store.open()
        store.close()
    with sqlite3.connect(path) as db:
        for row in rows:
            db.execute(row)
        assert db.execute("SELECT value FROM changewatch_meta WHERE name='schema_version'").fetchone() == (
            str(version),)


_KEY = ("INSERT INTO observations (spider, key, url, version, snapshot, last_seen) "
        "VALUES ('spider', 'k', 'https://s.example/k', 1, NULL, '2024-01-01T00:00:00Z')")


def test_a_schema_4_store_gains_the_dependency_sets_of_rendered_pages(tmp_path: Path) -> None:
    """Schema 4 → 5 (issue 13): the validators keep what they had and gain an empty ``render``."""
    path = tmp_path / "state.db"
    store_at(path, 4, "INSERT INTO validators (spider, url, key, etag) VALUES ('spider', 'https://s.example/p', "
                      "'page', '\"e1\"')")
    upgraded = SQLiteStore(path)
    upgraded.open()
    try:
        assert _schema_version(upgraded) == str(SCHEMA_VERSION)
        [v] = upgraded.validators("spider", "https://s.example/p")
        assert (v.key, v.etag, v.render) == ("page", '"e1"', None)
    finally:
        upgraded.close()


@pytest.mark.parametrize("version", [1, 2])
def test_an_old_store_is_upgraded_in_place(tmp_path: Path, version: int) -> None:
    path = tmp_path / "state.db"
    _old_store(path, SCHEMA_1 if version == 1 else SCHEMA_2, version)
    store = SQLiteStore(path)
    store.open()
    try:
        assert _schema_version(store) == str(SCHEMA_VERSION)
        fields = store.read("spider", "fields-only")
        assert fields is not None and fields.version == 1 and fields.snapshot is not None
        assert decoded(fields.snapshot).part("fields") == FieldsPart({"a": "1.00"}, {"a": "1"})
        assert fields.counters == {"baseline": 1, "field": 2} and fields.last_changed == "2024-01-02T00:00:00Z"
        assert (fields.first_seen, fields.last_good) == ("2024-01-01T00:00:00Z", "2024-01-03T00:00:00Z")

        page = store.read("spider", "page")
        assert page is not None and page.snapshot is not None and page.error_streak == 1
        snapshot = decoded(page.snapshot)
        content = snapshot.part("content")
        assert isinstance(content, ContentPart) and content.text == TEXT and content.fingerprint == FINGERPRINT
        assert (content.raw_hash, content.content_hash) == ("r1", "c1")
        entities = snapshot.part("entities")
        assert isinstance(entities, EntitiesPart) and list(entities.entities) == ["https://s.example/a"]

        errors = store.read("other", "errors-only")
        assert errors is not None and errors.snapshot is None and errors.error_streak == 3

        # changes logged before schema 2 count as delivered; schema 2's undelivered stay so
        assert [c.kind for c in store.changes("spider")] == (["field"] if version == 1 else ["field", "error"])
        assert [c.kind for c in store.undelivered("spider")] == ([] if version == 1 else ["error"])
        assert [c.lease_owner for c in store.changes()] == [None] * len(list(store.changes()))
        validators = store.validators("spider", "https://s.example/p")
        assert [(v.key, v.etag, v.runs, v.render) for v in validators] == (
            [] if version == 1 else [("page", '"e1"', 4, None)])
        assert store.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        later = Outcome(Kind.NONE, "https://s.example/p", "2024-01-04T00:00:00Z")
        assert store.commit("spider", "page", 1, later).version == 2  # and it goes on from there
    finally:
        store.close()


def test_a_failed_upgrade_leaves_the_store_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    _old_store(path, SCHEMA_2, 2)
    db = sqlite3.connect(path)
    db.execute("UPDATE observations SET fields='{not json' WHERE key='fields-only'")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match=r"upgrade it from schema 2 to 3.*'fields-only'"):
        SQLiteStore(path).open()
    db = sqlite3.connect(path)
    assert db.execute("SELECT value FROM changewatch_meta WHERE name='schema_version'").fetchone()[0] == "2"
    assert db.execute("SELECT count(*) FROM observations WHERE fields IS NOT NULL").fetchone()[0] == 1
    columns = [r[1] for r in db.execute("PRAGMA table_info(changes)")]
    assert "lease_owner" not in columns
    db.close()


def test_a_newer_schema_is_refused_untouched(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    store = SQLiteStore(path)
    store.open()
    store.close()
    db = sqlite3.connect(path)
    db.execute(f"UPDATE changewatch_meta SET value='{SCHEMA_VERSION + 1}' WHERE name='schema_version'")
    db.commit()
    db.close()
    before = path.read_bytes()
    with pytest.raises(StoreError) as caught:
        SQLiteStore(path).open()
    message = str(caught.value)
    assert str(path) in message and f"schema {SCHEMA_VERSION + 1}" in message and f"({SCHEMA_VERSION})" in message
    assert "newer" in message
    assert path.read_bytes() == before


def test_crawls_opening_an_old_store_at_once_upgrade_it_once(tmp_path: Path) -> None:
    for i in range(5):
        path = tmp_path / f"state{i}.db"
        _old_store(path, SCHEMA_1, 1)
        assert open_at_once(path) == []
        store = SQLiteStore(path)
        store.open()
        try:
            assert _schema_version(store) == str(SCHEMA_VERSION) and len(store.keys("spider")) == 2
        finally:
            store.close()


def test_a_store_of_schema_3_gains_an_empty_health_history(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    store_at(path, 3, _KEY)
    upgraded = SQLiteStore(path)
    upgraded.open()
    try:
        assert _schema_version(upgraded) == str(SCHEMA_VERSION)
        assert list(upgraded.history(HistoryQuery())) == []
        upgraded.commit("spider", "k", 1, Outcome(Kind.NONE, "https://s.example/", "2024-01-02T00:00:00Z"))
        assert [(r.day, r.kind) for r in upgraded.history(HistoryQuery())] == [("2024-01-02", "none")]
    finally:
        upgraded.close()


def test_a_schema_5_store_gains_notifications_and_keeps_its_changes(tmp_path: Path) -> None:
    """Schema 5 → 6 (issue 16): the notification and spend tables, nothing else touched; a change
    logged before has no destinations, so nothing is pending."""
    path = tmp_path / "state.db"
    store_at(path, 5, _KEY, "INSERT INTO changes (spider, key, kind, observed_at, record) VALUES "
                            "('spider', 'k', 'field', '2024-01-01T00:00:00Z', '{\"kind\": \"field\"}')")
    store = SQLiteStore(path)
    store.open()
    try:
        assert _schema_version(store) == str(SCHEMA_VERSION)
        assert [c.record for c in store.changes("spider")] == [{"kind": "field"}]
        assert store.notification_states() == [] and store.spend("2024-01-01") == (0.0, 0)
    finally:
        store.close()


def test_a_schema_7_store_moves_its_snapshots_to_their_own_table(tmp_path: Path) -> None:
    """Schema 7 → 8 (issue 10): each snapshot moves, byte for byte, to ``snapshots``; the key's
    row keeps everything else, and the key goes on from its version."""
    path = tmp_path / "state.db"
    blob = bytes(range(256)) * 200  # opaque to the store: not decoded on the way
    store_at(path, 7, _KEY.replace("NULL", "x'" + blob.hex() + "'"),
             _KEY.replace("'k'", "'no-snapshot'"),
             "INSERT INTO observations (spider, key, url, version, snapshot, counters) "
             "VALUES ('other', 'k', 'https://o.example/', 4, x'00ff', '{\"none\": 3}')")
    store = SQLiteStore(path)
    store.open()
    try:
        assert _schema_version(store) == str(SCHEMA_VERSION)
        k = store.read("spider", "k")
        assert k is not None and k.snapshot == blob and k.version == 1 and k.last_seen == "2024-01-01T00:00:00Z"
        empty = store.read("spider", "no-snapshot")
        assert empty is not None and empty.snapshot is None
        other = store.read("other", "k")
        assert other is not None and (other.snapshot, other.version, other.counters) == (b"\x00\xff", 4, {"none": 3})
        assert store.db.execute("SELECT count(*) FROM observations WHERE snapshot IS NOT NULL").fetchone()[0] == 0
        assert store.db.execute("SELECT count(*) FROM snapshots").fetchone()[0] == 2
        later = Outcome(Kind.NONE, "https://s.example/k", "2024-01-02T00:00:00Z")
        assert store.commit("spider", "k", 1, later).version == 2
        assert store.read("spider", "k").snapshot == blob  # type: ignore[union-attr]
        # whatever deletes a key deletes its snapshot: a key added back starts without one
        store.db.execute("DELETE FROM observations WHERE spider='other'")
        assert [tuple(r) for r in store.db.execute("SELECT spider, key FROM snapshots")] == [("spider", "k")]
        assert store.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        store.close()


def test_a_failed_move_to_schema_8_leaves_the_store_at_7(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    store_at(path, 7, _KEY.replace("NULL", "x'0102'"),
             "CREATE TABLE snapshots (x)")  # in the way: the step fails whole
    with pytest.raises(StoreError, match=r"upgrade it from schema 7 to 8"):
        SQLiteStore(path).open()
    db = sqlite3.connect(path)
    try:
        assert db.execute("SELECT value FROM changewatch_meta WHERE name='schema_version'").fetchone() == ("7",)
        assert db.execute("SELECT snapshot FROM observations").fetchone() == (b"\x01\x02",)
    finally:
        db.close()
