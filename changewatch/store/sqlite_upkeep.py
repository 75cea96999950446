"""The SQLite store's part in running for months (base.MaintainedStore): the due table, listed
marks, evidence, purges. A mixin of :class:`changewatch.store.sqlite.SQLiteStore`, kept apart so
that the crawl's path (opening, committing) reads on its own."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from ..core.schedule import DueEntry
from .base import ChangeEvidence, Evidence
from .changelog import entry
from .semantics import format_time
from .upkeep import Dialect, body_row, due_entry, kept_version, version_row

__all__ = ["SQLiteUpkeep"]

SQL = Dialect(mark="?", greatest="max")


class SQLiteUpkeep:
    """The due table, listed marks, evidence and purges of one SQLite store."""

    if TYPE_CHECKING:  # provided by SQLiteStore
        def _transaction(self, doing: str) -> AbstractContextManager[sqlite3.Connection]: ...

        def _reading(self, doing: str) -> AbstractContextManager[sqlite3.Connection]: ...

        def now(self) -> Any: ...

    @staticmethod
    def _write_evidence(db: sqlite3.Connection, spider: str, key: str, change_id: int | None, observed_at: str,
                        evidence: Evidence, now: Any) -> None:
        """In an observation's transaction: its body (once per digest) and the version."""
        db.execute(SQL.insert_body(), body_row(spider, evidence, format_time(now)))
        db.execute(SQL.insert_version(), version_row(spider, key, change_id, observed_at, evidence))

    def due_table(self, spider: str) -> dict[str, DueEntry]:
        with self._reading("read the schedule") as db:
            return dict(due_entry(row) for row in db.execute(SQL.due_table(), (spider,)))

    def mark_listed(self, spider: str, keys: Sequence[str], at: str) -> None:
        if not keys:
            return
        sql, args = SQL.mark_listed(keys)
        with self._transaction("note the keys still watched") as db:
            db.execute(sql, (at, spider, *args))

    def forget(self, spider: str, before: str, limit: int) -> list[str]:
        with self._transaction("forget keys no longer watched") as db:
            keys = [r[0] for r in db.execute(SQL.forget_candidates(), (spider, before, limit))]
            if not keys:
                return []
            sql, args = SQL.forget_keys(keys)
            forgotten = [r[0] for r in db.execute(sql, (spider, *args, before)).fetchall()]
            if forgotten:
                for table in ("validators", "evidence"):
                    sql, args = SQL.delete_of_keys(table, forgotten)
                    db.execute(sql, (spider, *args))
            return forgotten

    def purge_evidence(self, spider: str, before: str, limit: int) -> int:
        with self._transaction("delete evidence past its retention") as db:
            ids = [r[0] for r in db.execute(SQL.old_versions(), (spider, before, limit))]
            if ids:
                sql, args = SQL.delete_ids("evidence", ids)
                db.execute(sql, args)
            return len(ids)

    def purge_bodies(self, spider: str, before: str, limit: int) -> int:
        with self._transaction("delete bodies no evidence refers to") as db:
            digests = [r[0] for r in db.execute(SQL.unreferenced_bodies(), (spider, before, limit))]
            if not digests:
                return 0
            sql, args = SQL.delete_bodies(digests)
            return db.execute(sql, (spider, *args, before)).rowcount

    def purge_changes(self, spider: str, before: str, limit: int) -> int:
        with self._transaction("delete delivered changes past their retention") as db:
            ids = [r[0] for r in db.execute(SQL.old_changes(), (spider, before, limit))]
            if not ids:
                return 0
            sql, args = SQL.delete_ids("changes", ids, " AND delivered_at IS NOT NULL")
            return db.execute(sql, args).rowcount

    def change_evidence(self, change_id: int) -> ChangeEvidence | None:
        with self._reading("read a change's evidence") as db:
            row = db.execute(SQL.change(), (change_id,)).fetchone()
            if row is None:
                return None
            change = entry(row)
            after = kept_version(db.execute(SQL.after(), (change_id,)).fetchone())
            if after is not None:
                before_row = db.execute(SQL.before_version(), (change.spider, change.key, after.id)).fetchone()
            else:
                before_row = db.execute(SQL.before_time(), (change.spider, change.key, change.observed_at)).fetchone()
            return ChangeEvidence(change, kept_version(before_row), after)

