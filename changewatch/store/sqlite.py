"""SQLite store: the embedded default. WAL journal, one transaction per observation."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ..core.compare import Kind
from .base import (
    Decide,
    HttpValidators,
    LoggedChange,
    Outcome,
    StoredState,
    StoreError,
    dumps,
    snapshot_from_columns,
    snapshot_to_columns,
)

__all__ = ["SQLiteStore", "SCHEMA_VERSION"]

APP_ID = "changewatch"
SCHEMA_VERSION = 2
_SQLITE_MAGIC = b"SQLite format 3\x00"

_SCHEMA = """
CREATE TABLE changewatch_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE observations (
    spider TEXT NOT NULL,
    key TEXT NOT NULL,
    url TEXT NOT NULL,
    fields TEXT,
    entities TEXT,
    text BLOB,
    raw_hash TEXT,
    content_hash TEXT,
    fingerprint INTEGER,
    http TEXT NOT NULL DEFAULT '{}',
    counters TEXT NOT NULL DEFAULT '{}',
    first_seen TEXT,
    last_seen TEXT,
    last_good TEXT,
    last_changed TEXT,
    last_error TEXT,
    error_streak INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (spider, key)
);
CREATE TABLE changes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    spider TEXT NOT NULL,
    key TEXT NOT NULL,
    kind TEXT NOT NULL,
    observed_at TEXT NOT NULL,
    record TEXT NOT NULL
);
CREATE INDEX changes_by_key ON changes (spider, key, id);
"""

# Version 2: HTTP validators per (URL, key), looked up by the URL a request is for; and when each
# logged change was confirmed as exported (NULL: not yet, so the next run exports it again).
_SCHEMA_V2 = """
ALTER TABLE changes ADD COLUMN delivered_at TEXT;
CREATE INDEX changes_undelivered ON changes (spider, id) WHERE delivered_at IS NULL;
CREATE TABLE IF NOT EXISTS validators (
    spider TEXT NOT NULL,
    url TEXT NOT NULL,
    key TEXT NOT NULL,
    etag TEXT,
    last_modified TEXT,
    size INTEGER NOT NULL DEFAULT 0,
    full_at TEXT,
    runs INTEGER NOT NULL DEFAULT 0,
    spec TEXT,
    PRIMARY KEY (spider, url, key)
);
CREATE INDEX IF NOT EXISTS validators_by_key ON validators (spider, key);
"""

_STATE_COLUMNS = ("fields", "entities", "text", "raw_hash", "content_hash", "fingerprint")


class SQLiteStore:
    """Keyed store in one SQLite file. A file that is not a changewatch store is refused with
    a :class:`StoreError` and left untouched."""

    def __init__(self, path: str | os.PathLike[str], *, synchronous: str = "NORMAL", timeout: float = 30.0):
        self.path = Path(path)
        self.synchronous = synchronous
        self.timeout = timeout
        self._db: sqlite3.Connection | None = None

    @classmethod
    def from_uri(cls, uri: str) -> SQLiteStore:
        """``sqlite:///relative/path.db`` or ``sqlite:////absolute/path.db``."""
        prefix = "sqlite:///"
        if not uri.startswith(prefix) or len(uri) == len(prefix):
            raise StoreError(f"bad SQLite store URI {uri!r}: expected sqlite:///path/to/state.db")
        return cls(uri[len(prefix):])

    @property
    def fast_commits(self) -> bool:
        """Commits write the WAL without fsync: cheap enough to run on the reactor thread."""
        return self.synchronous in ("OFF", "NORMAL")

    def __repr__(self) -> str:
        return f"SQLiteStore({str(self.path)!r})"

    # -- opening ---------------------------------------------------------------------------------

    def open(self) -> None:
        if self._db is not None:
            return
        self._check_file()
        try:
            for parent in (self.path.parent, *self.path.parent.parents):
                if parent.exists() and not parent.is_dir():
                    raise NotADirectoryError(20, f"{parent} is a file, not a directory")
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the store's directory {self.path.parent}: {exc.strerror or exc}") from exc
        try:
            db = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open store {self.path}: {exc}") from exc
        db.row_factory = sqlite3.Row
        try:
            self._prepare(db)
        except BaseException:
            db.close()
            raise
        self._db = db

    def _check_file(self) -> None:
        if self.path.is_dir():
            raise StoreError(f"store path {self.path} is a directory, not a file")
        try:
            with self.path.open("rb") as f:
                head = f.read(16)
        except (FileNotFoundError, NotADirectoryError):
            return
        except OSError as exc:
            raise StoreError(f"cannot read store {self.path}: {exc.strerror or exc}") from exc
        if head and head != _SQLITE_MAGIC:
            raise StoreError(f"{self.path} is not a changewatch store (not an SQLite database); "
                             "it was left untouched: point CHANGEWATCH_STORE elsewhere or move it")

    def _prepare(self, db: sqlite3.Connection) -> None:
        try:
            tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            if not tables:
                self._create(db)
            elif "changewatch_meta" not in tables:
                raise StoreError(f"{self.path} is an SQLite database of another application (tables: "
                                 f"{', '.join(sorted(tables)[:5])}); it was left untouched")
            meta = dict(db.execute("SELECT name, value FROM changewatch_meta").fetchall())
            if meta.get("app") != APP_ID:
                raise StoreError(f"{self.path} is not a changewatch store (app={meta.get('app')!r})")
            version = int(meta.get("schema_version", "0"))
            if version > SCHEMA_VERSION:
                raise StoreError(f"{self.path} has store schema {version}, newer than this changewatch "
                                 f"understands ({SCHEMA_VERSION}): upgrade changewatch")
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(f"PRAGMA synchronous={self.synchronous}")
            check = db.execute("PRAGMA quick_check").fetchone()[0]
            if check != "ok":
                raise StoreError(f"store {self.path} failed SQLite's integrity check ({check}); "
                                 "it was left untouched: restore a backup or move it aside")
            if version < SCHEMA_VERSION:
                self._migrate(db)
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"store {self.path} is corrupt or unreadable ({exc}); it was left untouched") from exc

    def _create(self, db: sqlite3.Connection) -> None:
        try:
            db.execute("BEGIN IMMEDIATE")
            for statement in filter(str.strip, (_SCHEMA + _SCHEMA_V2).split(";")):
                db.execute(statement)
            db.executemany("INSERT INTO changewatch_meta VALUES (?, ?)",
                           [("app", APP_ID), ("schema_version", str(SCHEMA_VERSION))])
            db.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            if db.in_transaction:
                db.execute("ROLLBACK")
            if "readonly" in str(exc) or "read-only" in str(exc):
                raise StoreError(f"store {self.path} is read-only: {exc}") from exc
            raise StoreError(f"cannot create store {self.path}: {exc}") from exc

    def _migrate(self, db: sqlite3.Connection) -> None:
        """Version 1 → 2, in one transaction: the validators table (version 1 kept none), and
        delivery times, with every change logged so far taken as delivered (version 1 had no
        way to know otherwise, and re-exporting a whole history would be the worse error)."""
        try:
            db.execute("BEGIN IMMEDIATE")
            for statement in filter(str.strip, _SCHEMA_V2.split(";")):
                db.execute(statement)
            db.execute("UPDATE changes SET delivered_at='before-schema-2' WHERE delivered_at IS NULL")
            db.execute("UPDATE changewatch_meta SET value=? WHERE name='schema_version'", (str(SCHEMA_VERSION),))
            db.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise StoreError(f"cannot upgrade store {self.path} to schema {SCHEMA_VERSION}: {exc}") from exc

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            raise StoreError(f"store {self.path} is not open")
        return self._db

    # -- reading ---------------------------------------------------------------------------------

    def _state(self, row: sqlite3.Row | None) -> StoredState | None:
        if row is None:
            return None
        data = dict(row)
        return StoredState(
            key=data["key"], url=data["url"], snapshot=snapshot_from_columns(data),
            counters=json.loads(data["counters"]), first_seen=data["first_seen"],
            last_seen=data["last_seen"], last_good=data["last_good"], last_changed=data["last_changed"],
            last_error=data["last_error"], error_streak=data["error_streak"],
        )

    def get(self, spider: str, key: str) -> StoredState | None:
        row = self.db.execute("SELECT * FROM observations WHERE spider=? AND key=?", (spider, key)).fetchone()
        return self._state(row)

    def keys(self, spider: str) -> list[str]:
        return [r[0] for r in self.db.execute("SELECT key FROM observations WHERE spider=? ORDER BY key", (spider,))]

    def validators(self, spider: str, url: str) -> list[HttpValidators]:
        rows = self.db.execute("SELECT * FROM validators WHERE spider=? AND url=? ORDER BY key", (spider, url))
        return [HttpValidators(url=r["url"], key=r["key"], etag=r["etag"], last_modified=r["last_modified"],
                               size=r["size"], full_at=r["full_at"], runs=r["runs"], spec=r["spec"])
                for r in rows.fetchall()]

    def forget_validators(self, spider: str, url: str, keep: Sequence[str]) -> None:
        kept = list(keep)
        marks = ", ".join("?" * len(kept))
        self.db.execute(f"DELETE FROM validators WHERE spider=? AND url=? AND key NOT IN ({marks})",
                        (spider, url, *kept))

    def undelivered(self, spider: str) -> list[LoggedChange]:
        rows = self.db.execute("SELECT * FROM changes WHERE spider=? AND delivered_at IS NULL ORDER BY id", (spider,))
        return [LoggedChange(r["id"], r["spider"], r["key"], r["kind"], r["observed_at"], json.loads(r["record"]))
                for r in rows.fetchall()]

    def mark_delivered(self, spider: str, ids: Sequence[int], at: str) -> None:
        db = self.db
        db.execute("BEGIN IMMEDIATE")
        try:
            for start in range(0, len(ids), 500):
                chunk = list(ids[start:start + 500])
                db.execute(f"UPDATE changes SET delivered_at=? WHERE spider=? AND delivered_at IS NULL "
                           f"AND id IN ({', '.join('?' * len(chunk))})", (at, spider, *chunk))
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise

    def changes(self, spider: str | None = None, after_id: int = 0) -> Iterator[LoggedChange]:
        sql = "SELECT * FROM changes WHERE id > ?" + (" AND spider = ?" if spider is not None else "") + " ORDER BY id"
        args: tuple[Any, ...] = (after_id, spider) if spider is not None else (after_id,)
        for r in self.db.execute(sql, args).fetchall():
            yield LoggedChange(r["id"], r["spider"], r["key"], r["kind"], r["observed_at"], json.loads(r["record"]))

    # -- writing ---------------------------------------------------------------------------------

    def apply(self, spider: str, key: str, decide: Decide) -> Outcome:
        db = self.db
        db.execute("BEGIN IMMEDIATE")  # take the write lock before reading: no lost update
        try:
            row = db.execute("SELECT * FROM observations WHERE spider=? AND key=?", (spider, key)).fetchone()
            state = self._state(row)
            outcome = decide(state)
            self._write(spider, key, state, outcome)
            if outcome.record is not None:
                cur = db.execute("INSERT INTO changes (spider, key, kind, observed_at, record) VALUES (?,?,?,?,?)",
                                 (spider, key, outcome.kind.value, outcome.observed_at, dumps(outcome.record)))
                outcome.change_id = cur.lastrowid
            db.execute("COMMIT")
        except BaseException:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise
        return outcome

    def _write(self, spider: str, key: str, state: StoredState | None, outcome: Outcome) -> None:
        counters = dict(state.counters) if state else {}
        counters[outcome.kind.value] = counters.get(outcome.kind.value, 0) + 1
        if outcome.not_modified:
            counters["not_modified"] = counters.get("not_modified", 0) + 1
        now = outcome.observed_at
        values: dict[str, Any] = {
            "url": outcome.url, "counters": dumps(counters), "last_seen": now,
            "last_error": outcome.error if outcome.kind is Kind.ERROR else None,
            "error_streak": (state.error_streak + 1 if state else 1) if outcome.kind is Kind.ERROR else 0,
        }
        if outcome.snapshot is not None:
            values.update(snapshot_to_columns(outcome.snapshot))
            values["last_good"] = now
        self._write_validators(spider, key, outcome)
        if outcome.record is not None and outcome.kind is not Kind.ERROR:
            values["last_changed"] = now
        if state is None:
            values.update(spider=spider, key=key, first_seen=now)
            cols = ", ".join(values)
            self.db.execute(f"INSERT INTO observations ({cols}) VALUES ({', '.join('?' * len(values))})",
                            tuple(values.values()))
        else:
            sets = ", ".join(f"{c}=?" for c in values)
            self.db.execute(f"UPDATE observations SET {sets} WHERE spider=? AND key=?",
                            (*values.values(), spider, key))

    def _write_validators(self, spider: str, key: str, outcome: Outcome) -> None:
        if outcome.not_modified:
            self.db.execute("UPDATE validators SET runs=runs+1 WHERE spider=? AND url=? AND key=?",
                            (spider, outcome.url, key))
        v = outcome.http
        if v is None:
            return
        # A full response replaces whatever the key had, from any URL: the key may have moved.
        # A row without validators is kept too: it says the page had none (a full fetch next time).
        self.db.execute("DELETE FROM validators WHERE spider=? AND key=?", (spider, key))
        self.db.execute("INSERT INTO validators (spider, url, key, etag, last_modified, size, full_at, runs, spec) "
                        "VALUES (?,?,?,?,?,?,?,?,?)",
                        (spider, v.url, key, v.etag, v.last_modified, v.size, v.full_at or outcome.observed_at,
                         v.runs, v.spec))
