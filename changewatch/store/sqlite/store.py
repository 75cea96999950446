"""SQLite store: the embedded default. WAL journal; one short transaction per commit, whose
correctness comes from the version check (``UPDATE … WHERE version=?``, an ``INSERT`` failing on
the primary key), not from SQLite's write lock: the same logic holds with row locks elsewhere."""

from __future__ import annotations

import json
import logging
import os
import sqlite3
from collections.abc import Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ...core.validators import HttpValidators
from ..changelog import ENTRY_COLUMNS, EXPORT_ORDER, entry, insert_sql, not_empty, older_schema, paged, query_where
from ..errors import StoreError, VersionConflict
from ..options import Option, choice, resolve_options, seconds, split_query
from ..protocol import StoreOptions
from ..records import (
    TRANSFER_TABLES,
    ChangeQuery,
    Committed,
    Lease,
    LogEntry,
    LoggedChange,
    Outcome,
    StoreCounts,
    StoredState,
    TransferBatch,
)
from ..semantics import check_committable, clamp, logged_record, next_state, record_json, report_clamp
from .checkpoint import AUTOCHECKPOINT_PAGES, Checkpointer
from .health import SQLiteHealth
from .routing import SQLiteRouting, write_notifications
from .schema import check_file, existing_version, prepare, schema_version, store_error
from .upkeep import SQL, SQLiteUpkeep

__all__ = ["OPTIONS", "SQLiteStore"]

logger = logging.getLogger(__name__)

#: what a ``sqlite:///`` URI's query may set (and the crawl's settings default)
OPTIONS: dict[str, Option] = {
    "synchronous": choice("OFF", "NORMAL", "FULL", "EXTRA", default="NORMAL"),
    "timeout": seconds(default=30.0),  # how long a commit waits for another writer's lock
}
_CHUNK = 500  # ids per statement, well under SQLite's limit on parameters
#: a key's row with its snapshot, which lives in a table of its own (schema 8: an UPDATE that
#: changes a row's size rewrites all of it, and the counters change size on most observations)
_STATE = ("SELECT o.*, s.snapshot AS kept FROM observations o LEFT JOIN snapshots s "
          "ON s.spider = o.spider AND s.key = o.key WHERE o.spider=? AND o.key=?")
#: a key's validators for one URL, written in place when the row is there
_WRITE_VALIDATORS = ("INSERT INTO validators (spider, url, key, etag, last_modified, size, full_at, runs, spec, "
                     "render, links) VALUES (?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT (spider, url, key) DO UPDATE SET "
                     "etag = excluded.etag, last_modified = excluded.last_modified, size = excluded.size, "
                     "full_at = excluded.full_at, runs = excluded.runs, spec = excluded.spec, "
                     "render = excluded.render, links = excluded.links")
_KEEP_SNAPSHOT = ("INSERT INTO snapshots (spider, key, snapshot) VALUES (?,?,?) "
                  "ON CONFLICT (spider, key) DO UPDATE SET snapshot = excluded.snapshot")


class SQLiteStore(SQLiteHealth, SQLiteRouting, SQLiteUpkeep):
    """Keyed store in one SQLite file. A file that is not a changewatch store is refused with
    a :class:`StoreError` and left untouched."""

    def __init__(self, path: str | os.PathLike[str], *, synchronous: str = "NORMAL", timeout: float = 30.0):
        self.path = Path(path)
        try:  # it goes into a PRAGMA: only the names SQLite knows
            self.synchronous: str = OPTIONS["synchronous"].parse(synchronous)
        except ValueError:
            raise StoreError(f"SQLite store {path}: synchronous={synchronous!r} is not accepted: expected "
                             f"{OPTIONS['synchronous'].accepts}") from None
        self.timeout = timeout
        self._db: sqlite3.Connection | None = None
        #: checkpoints the log outside the committing thread (checkpoint.py); None: SQLite's own
        self._checkpointer: Checkpointer | None = None
        self._clamp_reported = False
        #: the file's full path when :meth:`open` created it (a crawl says so); None: it existed
        self.created: str | None = None
        self._init_history()

    @classmethod
    def from_uri(cls, uri: str, options: StoreOptions | None = None) -> SQLiteStore:
        """``sqlite:///relative/path.db``, ``sqlite:////absolute/path.db`` or ``sqlite:///:memory:``,
        with options in the query (``?synchronous=FULL&timeout=10``) overriding *options*."""
        base, query = split_query(uri)
        prefix = "sqlite:///"
        if base[:len(prefix)].lower() != prefix or len(base) == len(prefix):
            raise StoreError(f"bad SQLite store URI {uri!r}: expected sqlite:///path/to/state.db")
        return cls(base[len(prefix):], **resolve_options(uri, OPTIONS, options or {}, query))

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
        memory = str(self.path) == ":memory:"
        new = not memory and not self.path.exists()
        if not memory:
            check_file(self.path)
            self._make_directory()
        try:
            db = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise store_error(self.path, "open it", exc) from exc
        db.row_factory = sqlite3.Row
        try:
            prepare(db, self.path, self.synchronous, self.timeout)
            wal = db.execute("PRAGMA journal_mode").fetchone()[0].lower() == "wal"
            if wal:
                db.execute("PRAGMA wal_autocheckpoint=0")  # the checkpointer's thread does it
        except sqlite3.Error as exc:
            db.close()
            raise store_error(self.path, "open it", exc) from exc
        except BaseException:
            db.close()
            raise
        self._db = db
        self._checkpointer = Checkpointer(self.path) if wal else None
        if new:  # where, in full: a crawl started in another folder makes a store of its own
            self.created = str(self.path.resolve())

    def _make_directory(self) -> None:
        try:
            for parent in (self.path.parent, *self.path.parent.parents):
                if parent.exists() and not parent.is_dir():
                    raise NotADirectoryError(20, f"{parent} is a file, not a directory")
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the store's directory {self.path.parent}: {exc.strerror or exc}") from exc

    def close(self) -> None:
        if self._checkpointer is not None:
            self._checkpointer.stop()  # then closing the last connection checkpoints what is left
            self._checkpointer = None
        if self._db is not None:
            self._flush_history_at_close()
            self._db.close()
            self._db = None

    @property
    def db(self) -> sqlite3.Connection:
        if self._db is None:
            raise StoreError(f"store {self.path} is not open")
        return self._db

    def now(self) -> datetime:
        # One file on one machine: the store's clock is this machine's.
        return datetime.now(UTC)

    @contextmanager
    def _transaction(self, doing: str) -> Iterator[sqlite3.Connection]:
        """One write transaction; rolled back on any failure (SQLite rolls back a full disk
        itself), and an SQLite failure becomes a StoreError that says what and why."""
        db = self.db
        try:
            db.execute("BEGIN IMMEDIATE")  # wait for the write lock here, not between read and write
            yield db
            db.execute("COMMIT")
        except BaseException as exc:
            if db.in_transaction:
                db.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):
                raise store_error(self.path, doing, exc) from exc
            raise
        if self._checkpointer is not None and not self._checkpointer.written():
            self._checkpoint_here(db)

    def _checkpoint_here(self, db: sqlite3.Connection) -> None:
        """The checkpoint thread is gone: SQLite checkpoints in the committing thread again."""
        self._checkpointer = None
        logger.warning("store %s: checkpoints run in the committing thread from now on", self.path)
        try:
            db.execute(f"PRAGMA wal_autocheckpoint={AUTOCHECKPOINT_PAGES}")
        except sqlite3.Error as exc:
            raise store_error(self.path, "turn its automatic checkpoint back on", exc) from exc

    @contextmanager
    def _reading(self, doing: str) -> Iterator[sqlite3.Connection]:
        try:
            yield self.db
        except sqlite3.Error as exc:
            raise store_error(self.path, doing, exc) from exc

    # -- reading ---------------------------------------------------------------------------------

    @staticmethod
    def _state(row: sqlite3.Row | None) -> StoredState | None:
        if row is None:
            return None
        return StoredState(
            key=row["key"], url=row["url"], version=row["version"],
            snapshot=None if row["kept"] is None else bytes(row["kept"]),
            counters=json.loads(row["counters"]), first_seen=row["first_seen"], last_seen=row["last_seen"],
            last_good=row["last_good"], last_changed=row["last_changed"], last_error=row["last_error"],
            error_streak=row["error_streak"], schedule=row["schedule"], last_observed=row["last_observed"],
            content_since=row["content_since"],
        )

    @staticmethod
    def _change(row: sqlite3.Row) -> LoggedChange:
        return LoggedChange(row["id"], row["spider"], row["key"], row["kind"], row["observed_at"],
                            json.loads(row["record"]), row["lease_owner"])

    def read(self, spider: str, key: str) -> StoredState | None:
        with self._reading(f"read key {key!r}") as db:
            return self._state(db.execute(_STATE, (spider, key)).fetchone())

    def keys(self, spider: str) -> list[str]:
        with self._reading("list keys") as db:
            return [r[0] for r in db.execute("SELECT key FROM observations WHERE spider=? ORDER BY key", (spider,))]

    def changes(self, spider: str | None = None, after_id: int = 0) -> Iterator[LoggedChange]:
        sql = "SELECT * FROM changes WHERE id > ?" + (" AND spider = ?" if spider is not None else "") + " ORDER BY id"
        args: tuple[Any, ...] = (after_id, spider) if spider is not None else (after_id,)
        with self._reading("read the change log") as db:
            rows = db.execute(sql, args).fetchall()
        return iter([self._change(r) for r in rows])

    def undelivered(self, spider: str) -> list[LoggedChange]:
        with self._reading("read undelivered changes") as db:
            rows = db.execute("SELECT * FROM changes WHERE spider=? AND delivered_at IS NULL ORDER BY id", (spider,))
            return [self._change(r) for r in rows.fetchall()]

    def validators(self, spider: str, url: str) -> list[HttpValidators]:
        with self._reading("read validators") as db:
            rows = db.execute("SELECT * FROM validators WHERE spider=? AND url=? ORDER BY key", (spider, url))
            return [HttpValidators(url=r["url"], key=r["key"], etag=r["etag"], last_modified=r["last_modified"],
                                   size=r["size"], full_at=r["full_at"], runs=r["runs"], spec=r["spec"],
                                   render=r["render"], links=r["links"])
                    for r in rows.fetchall()]

    def replace_snapshot(self, spider: str, key: str, expected_version: int, snapshot: bytes) -> int:
        with self._transaction(f"replace the snapshot of key {key!r}") as db:
            cursor = db.execute("UPDATE observations SET version=version+1 WHERE spider=? AND key=? AND version=?",
                                (spider, key, expected_version))
            if cursor.rowcount != 1:
                raise VersionConflict(f"key {key!r} of spider {spider!r} is not at version {expected_version}")
            db.execute(_KEEP_SNAPSHOT, (spider, key, snapshot))
        return expected_version + 1

    # -- committing an observation ---------------------------------------------------------------

    def commit(self, spider: str, key: str, expected_version: int | None, outcome: Outcome, *,
               lease: Lease | None = None, previous: StoredState | None = None) -> Committed:
        now = self.now()
        observed_at, clamped = clamp(outcome.observed_at, now)
        with self._transaction(f"commit an observation of key {key!r}") as db:
            if previous is None or previous.version != expected_version:
                # Not given (or not the version expected): read it. Given, the UPDATE below is
                # conditional on the version: it is what is stored, or the commit conflicts.
                previous = self._state(db.execute(_STATE, (spider, key)).fetchone())
            check_committable(previous, expected_version, observed_at, spider, key)
            version = self._write_state(db, spider, key, expected_version, next_state(previous, outcome, observed_at))
            self._write_validators(db, spider, key, outcome, observed_at)
            if outcome.pages is not None:
                SQL.write_pages(db, spider, key, outcome.pages)
            change_id = None
            if (record := logged_record(outcome, observed_at, clamped)) is not None:
                change_id = db.execute(
                    "INSERT INTO changes (spider, key, kind, observed_at, record, lease_owner, lease_expires) "
                    "VALUES (?,?,?,?,?,?,?)",
                    (spider, key, outcome.kind.value, observed_at, record_json(record),
                     lease.owner if lease else None, now.timestamp() + lease.seconds if lease else None)).lastrowid
                if change_id is not None:
                    write_notifications(db, spider, change_id, outcome)
            if outcome.evidence is not None:
                self._write_evidence(db, spider, key, change_id, observed_at, outcome.evidence, now)
        self._counted(spider, outcome, observed_at)
        if clamped:
            report_clamp(logger, self._clamp_reported, spider, key, outcome.observed_at, now, observed_at)
            self._clamp_reported = True
        return Committed(version, change_id, observed_at, clamped)

    @staticmethod
    def _write_state(db: sqlite3.Connection, spider: str, key: str, expected: int | None,
                     values: dict[str, Any]) -> int:
        """Write the key's columns if it is still at *expected* (its snapshot, when it has a new
        one, into ``snapshots``); its new version."""
        snapshot = values.pop("snapshot", None)
        if expected is None:
            values.update(spider=spider, key=key, version=1)
            try:
                db.execute(f"INSERT INTO observations ({', '.join(values)}) VALUES ({', '.join('?' * len(values))})",
                           tuple(values.values()))
            except sqlite3.IntegrityError as exc:  # another writer created the key first
                raise VersionConflict(f"key {key!r} of spider {spider!r} exists already") from exc
            version = 1
        else:
            sets = ", ".join(f"{column}=?" for column in values)
            cursor = db.execute(f"UPDATE observations SET {sets}, version=? WHERE spider=? AND key=? AND version=?",
                                (*values.values(), expected + 1, spider, key, expected))
            if cursor.rowcount != 1:
                raise VersionConflict(f"key {key!r} of spider {spider!r} moved past version {expected}")
            version = expected + 1
        if snapshot is not None:
            db.execute(_KEEP_SNAPSHOT, (spider, key, snapshot))
        return version

    @staticmethod
    def _write_validators(db: sqlite3.Connection, spider: str, key: str, outcome: Outcome, observed_at: str) -> None:
        if outcome.not_modified:
            db.execute("UPDATE validators SET runs=runs+1 WHERE spider=? AND url=? AND key=?",
                       (spider, outcome.url, key))
        v = outcome.http
        if v is None:
            return
        # A full response replaces whatever the key had, from any URL: the key may have moved.
        # A row without validators is kept too: it says the page had none (a full fetch next time).
        # The key's rows of other URLs go (through validators_by_key: the planner scanned the table
        # otherwise), its row of this URL is written in place by an upsert: a DELETE and an INSERT
        # would rewrite both indexes and move the row to the end of the table, and a commit writes
        # every page it changed.
        db.execute("DELETE FROM validators INDEXED BY validators_by_key WHERE spider=? AND key=? AND url<>?",
                   (spider, key, v.url))
        db.execute(_WRITE_VALIDATORS, (spider, v.url, key, v.etag, v.last_modified, v.size, v.full_at or observed_at,
                                       v.runs, v.spec, v.render, v.links))

    def forget_validators(self, spider: str, url: str, keep: Sequence[str]) -> None:
        kept = list(keep)
        with self._transaction("forget validators") as db:
            db.execute(f"DELETE FROM validators WHERE spider=? AND url=? AND key NOT IN ({', '.join('?' * len(kept))})",
                       (spider, url, *kept))

    # -- delivery and leases ---------------------------------------------------------------------

    def lease_owners(self, spider: str) -> set[str]:
        with self._reading("read lease owners") as db:
            rows = db.execute("SELECT DISTINCT lease_owner FROM changes WHERE spider=? AND delivered_at IS NULL "
                              "AND lease_owner IS NOT NULL AND lease_expires > ?", (spider, self.now().timestamp()))
            return {r[0] for r in rows}

    def claim_undelivered(self, spider: str, lease: Lease, *, dead_owners: Collection[str] = ()) -> list[LoggedChange]:
        now = self.now().timestamp()
        dead = sorted(set(dead_owners))
        free = ("delivered_at IS NULL AND (lease_owner IS NULL OR lease_expires IS NULL OR lease_expires <= ?"
                + (f" OR lease_owner IN ({', '.join('?' * len(dead))})" if dead else "") + ")")
        with self._transaction("claim undelivered changes") as db:
            rows = db.execute(f"SELECT * FROM changes WHERE spider=? AND {free} ORDER BY id",
                              (spider, now, *dead)).fetchall()
            claimed: list[LoggedChange] = []
            for chunk in _chunks([r["id"] for r in rows]):
                # the same condition again: the claim holds without SQLite's lock too
                db.execute(f"UPDATE changes SET lease_owner=?, lease_expires=? WHERE spider=? AND {free} "
                           f"AND id IN ({', '.join('?' * len(chunk))})",
                           (lease.owner, now + lease.seconds, spider, now, *dead, *chunk))
                # only what this claim took: a backend without a database lock may have lost some
                claimed += [self._change(r) for r in db.execute(
                    f"SELECT * FROM changes WHERE spider=? AND lease_owner=? AND lease_expires=? "
                    f"AND id IN ({', '.join('?' * len(chunk))}) ORDER BY id",
                    (spider, lease.owner, now + lease.seconds, *chunk)).fetchall()]
        return claimed

    def renew_leases(self, spider: str, lease: Lease) -> int:
        with self._transaction("renew leases") as db:
            return db.execute("UPDATE changes SET lease_expires=? WHERE spider=? AND lease_owner=? "
                              "AND delivered_at IS NULL",
                              (self.now().timestamp() + lease.seconds, spider, lease.owner)).rowcount

    def release_leases(self, spider: str, owner: str, ids: Sequence[int] | None = None) -> None:
        sql = ("UPDATE changes SET lease_owner=NULL, lease_expires=NULL WHERE spider=? AND lease_owner=? "
               "AND delivered_at IS NULL")
        with self._transaction("release leases") as db:
            if ids is None:
                db.execute(sql, (spider, owner))
            for chunk in _chunks(ids or ()):
                db.execute(f"{sql} AND id IN ({', '.join('?' * len(chunk))})", (spider, owner, *chunk))

    def mark_delivered(self, spider: str, ids: Sequence[int], at: str) -> None:
        with self._transaction("mark changes delivered") as db:
            for chunk in _chunks(ids):
                db.execute(f"UPDATE changes SET delivered_at=? WHERE spider=? AND delivered_at IS NULL "
                           f"AND id IN ({', '.join('?' * len(chunk))})", (at, spider, *chunk))

    # -- the change log as the source of truth, and moving a store (base.ChangeLogStore, TransferableStore) --

    def open_existing(self, *, upgrade: bool = False) -> None:
        if self._db is not None:
            return
        found = existing_version(self.path, self.timeout)
        if found < schema_version() and not upgrade:
            raise older_schema(f"store {self.path}", found, schema_version())
        self.open()

    def query_changes(self, query: ChangeQuery, *, after_id: int = 0, batch_size: int = 1000) -> Iterator[LogEntry]:
        def fetch(after: int, limit: int) -> list[LogEntry]:
            where, args = query_where(query, after, "?")
            with self._reading("read the change log") as db:
                rows = db.execute(f"SELECT {ENTRY_COLUMNS} FROM changes WHERE {where} ORDER BY id LIMIT ?",
                                  (*args, limit)).fetchall()
            return [entry(r) for r in rows]

        return paged(fetch, after_id, batch_size)

    def export_rows(self, batch_size: int = 1000) -> Iterator[TransferBatch]:
        self.flush_history()
        db = self.db
        try:
            db.execute("BEGIN")  # one read transaction: one snapshot of every table (WAL)
            try:
                for table, columns in TRANSFER_TABLES.items():
                    cursor = db.execute(_export_sql(table, columns))
                    while rows := cursor.fetchmany(batch_size):
                        yield table, [tuple(row) for row in rows]
            finally:
                if db.in_transaction:
                    db.execute("ROLLBACK")
        except sqlite3.Error as exc:
            raise store_error(self.path, "read it for a migration", exc) from exc

    def import_rows(self, batches: Iterable[TransferBatch]) -> None:
        with self._transaction("import a migrated store") as db:
            held = [db.execute(f"SELECT count(*) FROM {table}").fetchone()[0] for table in TRANSFER_TABLES]
            if any(held):
                raise not_empty(f"store {self.path}", *held[:3])
            for table, rows in batches:
                if table == "observations":  # the snapshot goes to its own table (schema 8)
                    at = TRANSFER_TABLES[table].index("snapshot")
                    db.executemany(_KEEP_SNAPSHOT, [(r[0], r[1], r[at]) for r in rows if r[at] is not None])
                    rows = [(*r[:at], None, *r[at + 1:]) for r in rows]
                db.executemany(insert_sql(table, "?"), rows)

    def counts(self) -> StoreCounts:
        self.flush_history()
        with self._reading("count what it holds") as db:
            keys = dict(db.execute("SELECT spider, count(*) FROM observations GROUP BY spider ORDER BY spider"))
            validators = db.execute("SELECT count(*) FROM validators").fetchone()[0]
            changes, undelivered = db.execute("SELECT count(*), count(*) - count(delivered_at) FROM changes").fetchone()
            health = db.execute("SELECT (SELECT count(*) FROM health_history) + "
                                "(SELECT count(*) FROM health_conditions)").fetchone()[0]
            evidence = db.execute("SELECT count(*) FROM evidence").fetchone()[0]
        return StoreCounts(keys, validators, changes, undelivered, health, evidence)


def _export_sql(table: str, columns: Sequence[str]) -> str:
    """The query that reads *table* for a migration, its rows in :data:`TRANSFER_TABLES`' form:
    an observation with its snapshot from ``snapshots``."""
    if table != "observations":
        return f"SELECT {', '.join(columns)} FROM {table} ORDER BY {', '.join(EXPORT_ORDER[table])}"
    selected = ", ".join("s.snapshot" if column == "snapshot" else f"o.{column}" for column in columns)
    return (f"SELECT {selected} FROM observations o LEFT JOIN snapshots s ON s.spider = o.spider AND s.key = o.key "
            f"ORDER BY {', '.join(f'o.{column}' for column in EXPORT_ORDER[table])}")


def _chunks(ids: Sequence[int]) -> Iterator[list[int]]:
    for start in range(0, len(ids), _CHUNK):
        yield list(ids[start:start + _CHUNK])
