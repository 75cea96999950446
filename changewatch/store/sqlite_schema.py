"""The SQLite store's schema (version 8), its forward migrations, and how an SQLite failure is
named: opening refuses what is not ours, corrupt or newer, and never changes such a file."""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import quote

from .base import NoSuchStore, StoreError
from .health import HEALTH_TABLES
from .legacy import snapshot_from_v2_columns
from .semantics import APP_ID, check_schema_version

__all__ = ["SCHEMA_VERSION", "check_file", "existing_version", "prepare", "store_error"]

SCHEMA_VERSION = 8
#: the schema a new store is created at; the migrations after it bring it to SCHEMA_VERSION
_CREATED_VERSION = 3
SQLITE_MAGIC = b"SQLite format 3\x00"

_OBSERVATIONS = """
CREATE TABLE observations (
    spider TEXT NOT NULL,
    key TEXT NOT NULL,
    url TEXT NOT NULL,
    version INTEGER NOT NULL,
    snapshot BLOB,
    counters TEXT NOT NULL DEFAULT '{}',
    first_seen TEXT,
    last_seen TEXT,
    last_good TEXT,
    last_changed TEXT,
    last_error TEXT,
    error_streak INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (spider, key)
);
"""

SCHEMA = """
CREATE TABLE changewatch_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
""" + _OBSERVATIONS + """
CREATE TABLE changes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    spider TEXT NOT NULL,
    key TEXT NOT NULL,
    kind TEXT NOT NULL,
    observed_at TEXT NOT NULL,
    record TEXT NOT NULL,
    delivered_at TEXT,
    lease_owner TEXT,
    lease_expires REAL
);
CREATE INDEX changes_by_key ON changes (spider, key, id);
CREATE INDEX changes_undelivered ON changes (spider, id) WHERE delivered_at IS NULL;
CREATE TABLE validators (
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
CREATE INDEX validators_by_key ON validators (spider, key);
"""

# -- schema 6: notifications and summaries (issue 16) -- one self-contained step --------------------------------
# Each destination's delivery state per change (written with the change in the commit's transaction),
# and the day's spend on AI summaries shared by every process of the day.
_NOTIFY_TABLES = """
CREATE TABLE notifications (
    change_id INTEGER NOT NULL,
    destination TEXT NOT NULL,
    spider TEXT NOT NULL,
    shown TEXT NOT NULL,
    sent_at TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    claim_owner TEXT,
    claim_expires REAL,
    PRIMARY KEY (change_id, destination)
);
CREATE INDEX notifications_pending ON notifications (destination, change_id) WHERE sent_at IS NULL;
CREATE TABLE summary_spend (day TEXT PRIMARY KEY, cost REAL NOT NULL DEFAULT 0, calls INTEGER NOT NULL DEFAULT 0);
"""


def _migrate_5_to_6(db: sqlite3.Connection) -> None:
    """Notifications (none pending: changes logged before had no destinations) and summary spend."""
    for statement in _statements(_NOTIFY_TABLES):
        db.execute(statement)
    db.execute("UPDATE changewatch_meta SET value='6' WHERE name='schema_version'")
# -- end of schema 6 ---------------------------------------------------------------------------------------------


# Schema 2: validators per (URL, key), and when each logged change was confirmed as exported.
_V1_TO_V2 = """
ALTER TABLE changes ADD COLUMN delivered_at TEXT;
CREATE INDEX changes_undelivered ON changes (spider, id) WHERE delivered_at IS NULL;
CREATE TABLE IF NOT EXISTS validators (
    spider TEXT NOT NULL, url TEXT NOT NULL, key TEXT NOT NULL, etag TEXT, last_modified TEXT,
    size INTEGER NOT NULL DEFAULT 0, full_at TEXT, runs INTEGER NOT NULL DEFAULT 0, spec TEXT,
    PRIMARY KEY (spider, url, key)
);
CREATE INDEX IF NOT EXISTS validators_by_key ON validators (spider, key);
UPDATE changes SET delivered_at='before-schema-2' WHERE delivered_at IS NULL;
"""

# Schema 3: one opaque snapshot and a version per key (optimistic updates), leases on changes.
_V2_TO_V3 = """
ALTER TABLE changes ADD COLUMN lease_owner TEXT;
ALTER TABLE changes ADD COLUMN lease_expires REAL;
""" + _OBSERVATIONS.replace("CREATE TABLE observations", "CREATE TABLE observations_v3")

# -- schema 5 (issue 13, rendering): a rendered page's dependency set beside its validators -------
_V4_TO_V5 = "ALTER TABLE validators ADD COLUMN render TEXT"
# -- end of schema 5 ---------------------------------------------------------------------------

# -- issue 15, schema 7: adaptive revisits, evidence, forgetting (one self-contained step) ----------------------
# Per key: the schedule's estimate and due time, and when it was last listed without being
# fetched (a key neither fetched nor listed for CHANGEWATCH_FORGET_AFTER is forgotten). Evidence:
# the versions kept as served, and their bodies, compressed, once per spider and digest. A body's
# small columns come before it: reading them does not walk its overflow pages.
_V6_TO_V7 = """
ALTER TABLE observations ADD COLUMN schedule TEXT;
ALTER TABLE observations ADD COLUMN due_at TEXT;
ALTER TABLE observations ADD COLUMN due_interval REAL;
ALTER TABLE observations ADD COLUMN listed_at TEXT;
CREATE INDEX changes_by_time ON changes (spider, observed_at);
CREATE TABLE evidence_bodies (
    spider TEXT NOT NULL,
    digest TEXT NOT NULL,
    compression TEXT NOT NULL,
    size INTEGER NOT NULL,
    stored_at TEXT NOT NULL,
    body BLOB NOT NULL,
    PRIMARY KEY (spider, digest)
);
CREATE TABLE evidence (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    spider TEXT NOT NULL,
    key TEXT NOT NULL,
    change_id INTEGER,
    observed_at TEXT NOT NULL,
    url TEXT NOT NULL,
    status INTEGER NOT NULL,
    headers TEXT NOT NULL,
    digest TEXT NOT NULL,
    superseded INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX evidence_by_key ON evidence (spider, key, id);
CREATE INDEX evidence_by_change ON evidence (change_id) WHERE change_id IS NOT NULL;
CREATE INDEX evidence_by_digest ON evidence (spider, digest);
CREATE INDEX evidence_superseded ON evidence (spider, observed_at) WHERE superseded = 1
"""


def _migrate_6_to_7(db: sqlite3.Connection) -> None:
    """Schedule columns (empty: every key is due, as it always was), evidence tables (empty:
    versions observed before are not kept)."""
    for statement in _statements(_V6_TO_V7):
        db.execute(statement)
    db.execute("UPDATE changewatch_meta SET value='7' WHERE name='schema_version'")
# -- end of issue 15's step ---------------------------------------------------------------------------------------

# -- issue 10, schema 8: snapshots in a table of their own ---------------------------------------------------------
# SQLite rewrites a whole row, overflow pages and all, whenever an UPDATE changes the row's size:
# a key's counters, times and schedule change size on most observations, and with the snapshot in
# the same row (a page kept unread is ~31 KB, a text ~6 KB) an unchanged page rewrote it every
# time, and a scan of the schedule's columns walked every snapshot's overflow chain. A snapshot is
# written only when it changes now. ``observations.snapshot`` stays, always NULL (SQLite drops a
# column only from 3.35); a trigger removes a key's snapshot with its row, whatever deletes it.
_V7_TO_V8 = """
CREATE TABLE snapshots (
    spider TEXT NOT NULL,
    key TEXT NOT NULL,
    snapshot BLOB NOT NULL,
    PRIMARY KEY (spider, key)
);
INSERT INTO snapshots (spider, key, snapshot) SELECT spider, key, snapshot FROM observations WHERE snapshot IS NOT NULL;
UPDATE observations SET snapshot = NULL WHERE snapshot IS NOT NULL
"""
_V8_TRIGGER = """
CREATE TRIGGER snapshots_go_with_their_key AFTER DELETE ON observations BEGIN
    DELETE FROM snapshots WHERE spider = old.spider AND key = old.key;
END
"""  # one statement: the ';' in its body separates nothing


def _migrate_7_to_8(db: sqlite3.Connection) -> None:
    """Every stored snapshot moved to ``snapshots`` as it was (the bytes are not decoded)."""
    for statement in _statements(_V7_TO_V8):
        db.execute(statement)
    db.execute(_V8_TRIGGER)
    db.execute("UPDATE changewatch_meta SET value='8' WHERE name='schema_version'")
# -- end of schema 8 -----------------------------------------------------------------------------------------------

_V2_COPY = ("INSERT INTO observations_v3 (spider, key, url, version, snapshot, counters, first_seen, last_seen, "
            "last_good, last_changed, last_error, error_streak) VALUES (?,?,?,1,?,?,?,?,?,?,?,?)")


# ---- health: schema 4, the watcher's own history and open health conditions (store/health.py) ----
_V3_TO_V4 = HEALTH_TABLES.format(s="", without_rowid=" WITHOUT ROWID")


def _migrate_3_to_4(db: sqlite3.Connection) -> None:
    """The health history starts empty: the watcher is judged from the first run after the upgrade."""
    for statement in _statements(_V3_TO_V4):
        db.execute(statement)
    db.execute("UPDATE changewatch_meta SET value='4' WHERE name='schema_version'")
# ---- end of schema 4 ----


def _statements(script: str) -> list[str]:
    return [s for s in script.split(";") if s.strip()]


def store_error(path: Path | str, doing: str, exc: sqlite3.Error) -> StoreError:
    """A StoreError for *exc*, raised while *doing* something with the store at *path*, that says
    which kind of failure it is (cannot be written, busy, corrupt) and why."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    if name.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_FULL", "SQLITE_IOERR", "SQLITE_PERM")):
        return StoreError(f"store {path} cannot be written ({doing}): {exc}{_why_unwritable(Path(path))}")
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
        return StoreError(f"store {path} stayed locked by another writer ({doing}): {exc}; "
                          "raise the store's timeout (?timeout=SECONDS) if its writers are slow")
    if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")):
        return StoreError(f"store {path} is corrupt or unreadable ({exc}); it was left untouched: "
                          "restore a backup or move it aside")
    return StoreError(f"store {path}: cannot {doing}: {exc}")


def _why_unwritable(path: Path) -> str:
    if str(path) == ":memory:":
        return ""
    # os.access honours read-only mounts and immutable files even for root
    if path.exists() and not os.access(path, os.W_OK):
        return " (the file is read-only)"
    if path.parent.exists() and not os.access(path.parent, os.W_OK):
        return f" (its directory {path.parent} is read-only: SQLite writes {path.name}-wal beside it)"
    return ""


def check_file(path: Path) -> None:
    """Refuse, before SQLite opens it, a path that is a directory or a file that is not SQLite."""
    if path.is_dir():
        raise StoreError(f"store path {path} is a directory, not a file")
    try:
        with path.open("rb") as f:
            head = f.read(16)
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as exc:
        raise StoreError(f"cannot read store {path}: {exc.strerror or exc}") from exc
    if head and head != SQLITE_MAGIC:
        raise StoreError(f"{path} is not a changewatch store (not an SQLite database); "
                         "it was left untouched: point CHANGEWATCH_STORE elsewhere or move it")


def prepare(db: sqlite3.Connection, path: Path, synchronous: str, timeout: float) -> None:
    """Create the schema in an empty database or upgrade an older one, after refusing a database
    that is not ours, newer or corrupt; then make sure the store can be written. Several crawls
    may open one store at once: each step checks again, under the write lock, that it is due."""
    if not _tables(db, path):
        _in_transaction(db, path, "create the schema", partial(_create, db))
    tables = _tables(db, path)
    if "changewatch_meta" not in tables:
        raise StoreError(f"{path} is an SQLite database of another application (tables: "
                         f"{', '.join(sorted(tables)[:5])}); it was left untouched")
    version = _schema_version(db, path)
    _use_wal(db, path, timeout)
    try:
        db.execute(f"PRAGMA synchronous={synchronous}")
        check = db.execute("PRAGMA quick_check").fetchone()[0]
    except sqlite3.Error as exc:
        raise store_error(path, "check it", exc) from exc
    if check != "ok":
        raise StoreError(f"store {path} failed SQLite's integrity check ({check}); "
                         "it was left untouched: restore a backup or move it aside")
    for old, migrate in _MIGRATIONS:
        if version == old and old < SCHEMA_VERSION:
            step = partial(_migrate_if_at, db, path, old, migrate)
            _in_transaction(db, path, f"upgrade it from schema {old} to {old + 1}", step)
            version = old + 1
    # SQLite opens a file it may not write read-only without a word: find out now, not at the
    # first commit of a crawl.
    _in_transaction(db, path, "write to it", partial(db.execute, "UPDATE changewatch_meta SET value=value "
                                                                "WHERE name='app'"), rollback=True)


def _use_wal(db: sqlite3.Connection, path: Path, timeout: float) -> None:
    """Put the file in WAL mode (it stays so). The switch needs the database to itself and SQLite
    does not wait for it as it waits for a write lock: another crawl opening the new store at the
    same moment is waited for here."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if db.execute("PRAGMA journal_mode").fetchone()[0].lower() in ("wal", "memory"):
                return
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if exc.sqlite_errorname != "SQLITE_BUSY" or time.monotonic() >= deadline:
                raise store_error(path, "switch it to WAL mode", exc) from exc
            time.sleep(0.01)


def _tables(db: sqlite3.Connection, path: Path) -> set[str]:
    try:
        return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    except sqlite3.Error as exc:
        raise store_error(path, "read its tables", exc) from exc


def _migrate_if_at(db: sqlite3.Connection, path: Path, version: int, migrate: Callable[[sqlite3.Connection], None]
                   ) -> None:
    if _schema_version(db, path) == version:  # not upgraded by another crawl meanwhile
        migrate(db)


def _schema_version(db: sqlite3.Connection, path: Path) -> int:
    try:
        meta = dict(db.execute("SELECT name, value FROM changewatch_meta").fetchall())
    except sqlite3.Error as exc:
        raise store_error(path, "read its metadata", exc) from exc
    return check_schema_version(meta, str(path), SCHEMA_VERSION)


def _in_transaction(db: sqlite3.Connection, path: Path, doing: str, work: Callable[[], object], *,
                    rollback: bool = False) -> None:
    try:
        db.execute("BEGIN IMMEDIATE")
        work()
        db.execute("ROLLBACK" if rollback else "COMMIT")
    except BaseException as exc:
        if db.in_transaction:
            db.execute("ROLLBACK")
        if isinstance(exc, sqlite3.Error):
            raise store_error(path, doing, exc) from exc
        if isinstance(exc, StoreError):
            raise
        if isinstance(exc, Exception):
            raise StoreError(f"store {path}: cannot {doing}: {exc}; it was left as it was") from exc
        raise


def _create(db: sqlite3.Connection) -> None:
    if db.execute("SELECT count(*) FROM sqlite_master WHERE type='table'").fetchone()[0]:
        return  # another crawl created it since we looked
    for statement in _statements(SCHEMA):
        db.execute(statement)
    # created at schema 3, then brought up to date by the same steps that upgrade an older store
    db.executemany("INSERT INTO changewatch_meta VALUES (?, ?)",
                   [("app", APP_ID), ("schema_version", str(_CREATED_VERSION))])


def _migrate_1_to_2(db: sqlite3.Connection) -> None:
    """Validators (schema 1 kept none) and delivery times, every change logged so far taken as
    delivered: schema 1 had no way to know otherwise, and exporting a whole history again would
    be the worse error."""
    for statement in _statements(_V1_TO_V2):
        db.execute(statement)
    db.execute("UPDATE changewatch_meta SET value='2' WHERE name='schema_version'")


def _migrate_2_to_3(db: sqlite3.Connection) -> None:
    """A version and one snapshot per key (from schema 2's column per comparison), leases on
    changes. Every key starts at version 1; no change is leased."""
    for statement in _statements(_V2_TO_V3):
        db.execute(statement)
    old = db.execute("SELECT * FROM observations ORDER BY spider, key")
    columns = [c[0] for c in old.description]
    while rows := old.fetchmany(500):
        db.executemany(_V2_COPY, [_v3_row(dict(zip(columns, row, strict=True))) for row in rows])
    old.close()
    db.execute("DROP TABLE observations")
    db.execute("ALTER TABLE observations_v3 RENAME TO observations")
    db.execute("UPDATE changewatch_meta SET value='3' WHERE name='schema_version'")


def _migrate_4_to_5(db: sqlite3.Connection) -> None:
    """Schema 5 (issue 13): a rendered page's dependency set, kept in its key's validators row
    (none yet: every rendered page is rendered on its first run after the upgrade)."""
    db.execute(_V4_TO_V5)
    db.execute("UPDATE changewatch_meta SET value='5' WHERE name='schema_version'")


def _v3_row(row: dict[str, Any]) -> tuple[Any, ...]:
    try:
        snapshot = snapshot_from_v2_columns(row)
    except Exception as exc:
        raise ValueError(f"the state of key {row['key']!r} (spider {row['spider']!r}) does not convert "
                         f"to a snapshot: {exc!r}") from exc
    return (row["spider"], row["key"], row["url"], snapshot, row["counters"] or "{}", row["first_seen"],
            row["last_seen"], row["last_good"], row["last_changed"], row["last_error"], row["error_streak"] or 0)


def existing_version(path: Path, timeout: float) -> int:
    """The schema version of the store at *path*, read without creating or changing anything:
    NoSuchStore when there is no file (or an empty one, which SQLite would take as a new
    database), StoreError for a file that is not ours or of a newer schema."""
    if str(path) == ":memory:" or not path.exists():
        raise NoSuchStore(f"no such store: {path} does not exist (nothing was created)")
    check_file(path)
    if path.stat().st_size == 0:
        raise NoSuchStore(f"no such store: {path} is an empty file")
    try:  # mode=ro: SQLite neither creates the file nor writes to it
        db = sqlite3.connect(f"file:{quote(str(path.absolute()))}?mode=ro", uri=True, timeout=timeout)
    except sqlite3.Error as exc:
        raise store_error(path, "open it", exc) from exc
    try:
        tables = _tables(db, path)
        if "changewatch_meta" not in tables:
            raise StoreError(f"{path} is an SQLite database of another application (tables: "
                             f"{', '.join(sorted(tables)[:5]) or 'none'}); it was left untouched")
        return _schema_version(db, path)
    finally:
        db.close()


#: (schema, the step that upgrades a store at it to the next), in order; a new store is created at
#: _CREATED_VERSION and brought up by the same steps
_MIGRATIONS: tuple[tuple[int, Callable[[sqlite3.Connection], None]], ...] = (
    (1, _migrate_1_to_2), (2, _migrate_2_to_3), (3, _migrate_3_to_4), (4, _migrate_4_to_5), (5, _migrate_5_to_6),
    (6, _migrate_6_to_7), (7, _migrate_7_to_8))
