"""A store written by a development build (a schema below the first released one) is refused with
one line that says what to do, by every way of opening it, and is never upgraded or changed: a
crawl stops (exit 1), a command exits 2."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from changewatch.cli import main
from changewatch.core.comparisons import Kind
from changewatch.demo.site import DemoSite
from changewatch.store import OlderSchema, Outcome, StoreError, store_from_uri
from changewatch.store.postgresql import PostgreSQLStore
from changewatch.store.semantics import FIRST_SCHEMA
from changewatch.store.sqlite import SQLiteStore
from changewatch.store.sqlite.schema import existing_version

from ..e2e.crawl import Crawler

#: the DDL development schema 1 shipped, the oldest a store can be
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
INSERT INTO changewatch_meta VALUES ('app', 'changewatch'), ('schema_version', '1');
INSERT INTO observations (spider, key, url, fields) VALUES ('watch', 'k', 'https://s.example/', '{}');
"""


def refusal(subject: str, version: int) -> str:
    return (f"{subject} was written by a development build of changewatch (store schema {version}) and is not read "
            "by this one; it was left untouched: point CHANGEWATCH_STORE (or --store) at a new store path, where "
            "baselines are taken again silently")


def development_store(path: Path, version: int) -> None:
    """A store as development build *version* left it: schema 1's own tables, or (later ones
    differed from today's by a step or two) today's tables holding a key, marked *version*."""
    if version == 1:
        with sqlite3.connect(path) as db:
            db.executescript(SCHEMA_1)
        db.close()
        return
    store = SQLiteStore(path)
    store.open()
    store.commit("watch", "k", None, Outcome(Kind.BASELINE, "https://s.example/", "2024-01-01T00:00:00Z",
                                             snapshot=b"s"))
    store.close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE changewatch_meta SET value=? WHERE name='schema_version'", (str(version),))
    db.close()


def _written(directory: Path) -> dict[str, bytes]:
    """The store's file and what was written beside it (a read-only reader of a WAL database leaves
    an empty ``-wal`` and its index behind: SQLite needs them to read, and only a writer removes them)."""
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())
            if not p.name.endswith("-shm") and not (p.name.endswith("-wal") and p.stat().st_size == 0)}


@pytest.mark.parametrize("version", [1, 3, 8, FIRST_SCHEMA - 1])
def test_a_development_store_is_refused_and_left_as_it_was(tmp_path: Path, version: int) -> None:
    path = tmp_path / "state.db"
    development_store(path, version)
    before = _written(tmp_path)
    for opening in (lambda s: s.open(), lambda s: s.open_existing(), lambda s: s.open_existing(upgrade=True)):
        with pytest.raises(StoreError) as caught:
            opening(SQLiteStore(path))
        assert not isinstance(caught.value, OlderSchema)  # no --upgrade can take it
        assert str(caught.value) == refusal(str(path), version)
        assert _written(tmp_path) == before  # not a byte changed, nothing in a -wal beside it
    with pytest.raises(StoreError, match="development build"):
        existing_version(path, 1.0)


@pytest.mark.slow  # a crawl subprocess
def test_a_crawl_stops_at_a_development_store(tmp_path: Path, demo_site: tuple[DemoSite, str]) -> None:
    _, base = demo_site
    path = tmp_path / "state.db"
    development_store(path, 8)
    before = path.read_bytes()
    failed = Crawler(tmp_path, [{"url": f"{base}/terms", "key": "terms"}], store=f"sqlite:///{path}").run()
    assert failed.returncode == 1, failed.stderr[-3000:]
    [line] = [line for line in failed.stderr.splitlines() if "stopping the crawl" in line]
    assert "the store cannot be opened" in line and line.endswith(refusal(str(path), 8)), line
    assert "Traceback" not in failed.stderr and failed.records == []
    assert path.read_bytes() == before


@pytest.mark.parametrize("upgrade", [(), ("--upgrade",)])
def test_a_command_exits_2_at_a_development_store(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  upgrade: tuple[str, ...]) -> None:
    path = tmp_path / "state.db"
    development_store(path, 3)
    before = path.read_bytes()
    assert main(["changes", "--store", f"sqlite:///{path}", *upgrade]) == 2
    err = capsys.readouterr().err
    assert err == f"changewatch changes: {refusal(str(path), 3)}\n"
    assert path.read_bytes() == before


def _pg_columns(store: PostgreSQLStore) -> list[tuple[Any, ...]]:
    with store._cursor("test") as cur:
        cur.execute("SELECT table_name, column_name, data_type FROM information_schema.columns "
                    "WHERE table_schema = %s ORDER BY table_name, ordinal_position", (store.schema,))
        columns = [tuple(r) for r in cur.fetchall()]
        cur.execute(f"SELECT name, value FROM {store._quoted}.changewatch_meta ORDER BY name")
        meta = [tuple(r) for r in cur.fetchall()]
        cur.execute(f"SELECT spider, key, version FROM {store._quoted}.observations")
        return [*columns, *meta, *(tuple(r) for r in cur.fetchall())]


@pytest.mark.parametrize("version", [1, 5, FIRST_SCHEMA - 1])
def test_a_postgresql_development_store_is_refused_and_left_as_it_was(postgresql_store_uri: str,
                                                                      version: int) -> None:
    store: Any = store_from_uri(postgresql_store_uri)
    store.open()
    store.commit("watch", "k", None, Outcome(Kind.BASELINE, "https://s.example/", "2024-01-01T00:00:00Z",
                                             snapshot=b"s"))
    with store._cursor("test") as cur:
        cur.execute(f"UPDATE {store._quoted}.changewatch_meta SET value = %s WHERE name = 'schema_version'",
                    (str(version),))
    before = _pg_columns(store)
    for opening in (lambda s: s.open(), lambda s: s.open_existing(), lambda s: s.open_existing(upgrade=True)):
        other: Any = store_from_uri(postgresql_store_uri)
        with pytest.raises(StoreError) as caught:
            opening(other)
        other.close()
        assert not isinstance(caught.value, OlderSchema)
        assert str(caught.value).endswith(refusal(f"schema {store.schema!r}", version))
        assert "\n" not in str(caught.value)
        assert _pg_columns(store) == before
    store.close()
