"""The SQLite store's schema, the steps that upgrade a store of an older released schema, and how
an SQLite failure is named: opening refuses what is not ours, corrupt, newer or written by a
development build, and never changes such a file."""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from urllib.parse import quote

from ..errors import NoSuchStore, StoreError
from ..health import HEALTH_TABLES
from ..semantics import APP_ID, FIRST_SCHEMA, check_schema_version

__all__ = ["MIGRATIONS", "check_file", "existing_version", "prepare", "schema_version", "store_error"]

SQLITE_MAGIC = b"SQLite format 3\x00"

# ``observations.snapshot`` is always NULL: snapshots live in ``snapshots``, whose rows SQLite
# rewrites only when a snapshot changes (a row is rewritten, overflow pages and all, whenever an
# UPDATE changes its size, and a key's counters and times change size on most observations). A
# trigger removes a key's snapshot with its row, whatever deletes it. A body's small columns come
# before it: reading them does not walk its overflow pages.
SCHEMA = """
CREATE TABLE changewatch_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
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
    schedule TEXT,
    due_at TEXT,
    due_interval REAL,
    listed_at TEXT,
    PRIMARY KEY (spider, key)
);
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
CREATE INDEX changes_by_time ON changes (spider, observed_at);
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
    render TEXT,
    PRIMARY KEY (spider, url, key)
);
CREATE INDEX validators_by_key ON validators (spider, key);
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
CREATE INDEX evidence_superseded ON evidence (spider, observed_at) WHERE superseded = 1;
CREATE TABLE snapshots (
    spider TEXT NOT NULL,
    key TEXT NOT NULL,
    snapshot BLOB NOT NULL,
    PRIMARY KEY (spider, key)
);
""" + HEALTH_TABLES.format(s="", without_rowid=" WITHOUT ROWID")

_TRIGGER = """
CREATE TRIGGER snapshots_go_with_their_key AFTER DELETE ON observations BEGIN
    DELETE FROM snapshots WHERE spider = old.spider AND key = old.key;
END
"""  # one statement: the ';' in its body separates nothing

#: ``MIGRATIONS[n]`` upgrades a store at schema ``FIRST_SCHEMA + n`` to the next: SQL (statements
#: separated by ';') or a function of the connection, run in one transaction. A new store is created
#: at FIRST_SCHEMA and brought up by the same steps, so a schema change is one step appended here.
#: 100 → 101: a key's last observation of its page (``last_observed``: a 304 or an unchanged page
#: counts, an error does not) and since when its snapshot's content has been seen
#: (``content_since``), apart from ``last_good``, which any rewrite of the snapshot moves (noise,
#: what was learned). A key already stored gets the best its columns tell: its last fetch when
#: that was no error (a noisy page's is not one), else its last snapshot's; the time of its last
#: change, else its first fetch.
MIGRATIONS: list[str | Callable[[sqlite3.Connection], None]] = [
    "ALTER TABLE observations ADD COLUMN last_observed TEXT; "
    "ALTER TABLE observations ADD COLUMN content_since TEXT; "
    "UPDATE observations SET "
    "last_observed = CASE WHEN last_error IS NULL OR substr(last_error, 1, 6) = 'noisy:' THEN last_seen "
    "ELSE last_good END, "
    "content_since = CASE WHEN last_good IS NOT NULL THEN coalesce(last_changed, first_seen) END",
    # 101 → 102: a notification can be discarded (changewatch notify --discard): recorded, no longer pending
    "ALTER TABLE notifications ADD COLUMN discarded_at TEXT; DROP INDEX notifications_pending; "
    "CREATE INDEX notifications_pending ON notifications (destination, change_id) "
    "WHERE sent_at IS NULL AND discarded_at IS NULL",
    # 102 → 103: a link-mode site page's links, kept with its validators: a 304 still leads to them
    "ALTER TABLE validators ADD COLUMN links TEXT",
    # 103 → 104: a site watch's page set, one row a page (the site watch's key, the page's canonical
    # URL), written in the transaction of the observation that reports it; it goes with its key
    "CREATE TABLE site_pages (spider TEXT NOT NULL, site TEXT NOT NULL, url TEXT NOT NULL, "
    "PRIMARY KEY (spider, site, url)) WITHOUT ROWID; "
    "CREATE TABLE site_sets (spider TEXT NOT NULL, site TEXT NOT NULL, spec TEXT NOT NULL, "
    "PRIMARY KEY (spider, site))",
]


def schema_version() -> int:
    """The schema this code creates and writes."""
    return FIRST_SCHEMA + len(MIGRATIONS)


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
    that is not ours, newer, a development build's or corrupt; then make sure the store can be written. Several crawls
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
    while version < schema_version():
        step = partial(_migrate_if_at, db, path, version, MIGRATIONS[version - FIRST_SCHEMA])
        _in_transaction(db, path, f"upgrade it from schema {version} to {version + 1}", step)
        version += 1
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


def _migrate_if_at(db: sqlite3.Connection, path: Path, version: int,
                   step: str | Callable[[sqlite3.Connection], None]) -> None:
    if _schema_version(db, path) != version:
        return  # upgraded by another crawl meanwhile
    if callable(step):
        step(db)
    else:
        for statement in _statements(step):
            db.execute(statement)
    db.execute("UPDATE changewatch_meta SET value=? WHERE name='schema_version'", (str(version + 1),))


def _schema_version(db: sqlite3.Connection, path: Path) -> int:
    try:
        meta = dict(db.execute("SELECT name, value FROM changewatch_meta").fetchall())
    except sqlite3.Error as exc:
        raise store_error(path, "read its metadata", exc) from exc
    return check_schema_version(meta, str(path), schema_version())


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
    db.execute(_TRIGGER)
    db.executemany("INSERT INTO changewatch_meta VALUES (?, ?)",
                   [("app", APP_ID), ("schema_version", str(FIRST_SCHEMA))])










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

