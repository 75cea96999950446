"""The SQLite store's health history and conditions (:class:`~.health.HealthStore`): a mixin of
:class:`changewatch.store.sqlite.SQLiteStore`, kept apart so that the crawl's path reads on its own.

The history is counted in memory and written every few seconds (:data:`HISTORY_FLUSH_SECONDS`),
before it is read, and when the store closes, in a transaction of its own: an upsert in every
commit's transaction wrote one more page to the WAL per observation (0.6-0.7x of the store's
commit rate, bench/bench_health.py). A process killed meanwhile loses at most those seconds of
counts, never an observation or a change."""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..changelog import query_where
from ..health import FailingWatch, HistoryQuery, HistoryRow, OpenCondition, history_entry, history_where, spiders_where
from ..records import ChangeQuery, Lease
from ..semantics import record_json
from ..status import KeyStatus, StatusQuery, last_changes_sql, paged_statuses, status_rows, status_sql

__all__ = ["HISTORY_FLUSH_SECONDS", "SQLiteHealth"]

logger = logging.getLogger(__name__)

# counts added as they were summed in memory
_ADD = ("INSERT INTO health_history (spider, site, day, kind, count, distances, distance_sum, distance_max) "
        "VALUES (?,?,?,?,?,?,?,?) ON CONFLICT (spider, site, day, kind) DO UPDATE SET "
        "count = health_history.count + excluded.count, distances = health_history.distances + excluded.distances, "
        "distance_sum = health_history.distance_sum + excluded.distance_sum, "
        "distance_max = max(health_history.distance_max, excluded.distance_max)")
#: the longest the history counted in memory waits before it is written
HISTORY_FLUSH_SECONDS = 5.0


class SQLiteHealth:
    if TYPE_CHECKING:  # provided by SQLiteStore
        def _transaction(self, doing: str) -> AbstractContextManager[sqlite3.Connection]: ...

        def _reading(self, doing: str) -> AbstractContextManager[sqlite3.Connection]: ...

        def now(self) -> datetime: ...

    def _init_history(self) -> None:
        #: (spider, site, day, kind) → [count, distances, distance sum, distance max] not written yet
        self._history_pending: dict[tuple[str, str, str, str], list[int]] = {}
        self._history_written = time.monotonic()

    def _counted(self, spider: str, outcome: Any, observed_at: str) -> None:
        """A committed observation counted in the health history (in memory; written when due)."""
        site, day, kind, distance = history_entry(outcome, observed_at)
        pending = self._history_pending
        row = pending.get((spider, site, day, kind))
        if row is None:
            row = pending[(spider, site, day, kind)] = [0, 0, 0, 0]
        row[0] += 1
        if distance is not None:
            row[1] += 1
            row[2] += distance
            row[3] = max(row[3], distance)
        if time.monotonic() - self._history_written > HISTORY_FLUSH_SECONDS:
            self.flush_history()

    def flush_history(self) -> None:
        """Write the history counted since it was last written (one transaction)."""
        pending = self._history_pending
        self._history_written = time.monotonic()
        if not pending:
            return
        with self._transaction("count observations in the health history") as db:
            db.executemany(_ADD, [(*key, *row) for key, row in pending.items()])
        pending.clear()

    def _flush_history_at_close(self) -> None:
        try:
            self.flush_history()
        except Exception as exc:  # statistics only: the observations and changes are written
            logger.warning("changewatch: the health history of the last seconds could not be written: %s", exc)

    def _log(self, db: sqlite3.Connection, spider: str, key: str, kind: str, record: dict[str, Any],
             lease: Lease | None) -> int:
        now = self.now().timestamp()
        cursor = db.execute(
            "INSERT INTO changes (spider, key, kind, observed_at, record, lease_owner, lease_expires) "
            "VALUES (?,?,?,?,?,?,?)",
            (spider, key, kind, record["observed_at"], record_json(record), lease.owner if lease else None,
             now + lease.seconds if lease else None))
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    def history(self, query: HistoryQuery) -> Iterator[HistoryRow]:
        self.flush_history()
        where, args = history_where(query, "?")
        with self._reading("read the health history") as db:
            rows = db.execute("SELECT spider, site, day, kind, count, distances, distance_sum, distance_max "
                              f"FROM health_history WHERE {where} ORDER BY spider, site, day, kind", args).fetchall()
        return iter([HistoryRow(*tuple(r)) for r in rows])

    def conditions(self, spider: str | None) -> list[OpenCondition]:
        where, args = spiders_where((spider,) if spider is not None else (), "?")
        with self._reading("read the open health conditions") as db:
            rows = db.execute("SELECT spider, site, condition, since, error, change_id FROM health_conditions "
                              f"WHERE {where} ORDER BY spider, site, condition", args).fetchall()
        return [OpenCondition(*tuple(r)) for r in rows]

    def change_counts(self, query: ChangeQuery) -> dict[tuple[str, str], int]:
        where, args = query_where(query, 0, "?")
        with self._reading("count the change log") as db:
            rows = db.execute(f"SELECT spider, kind, count(*) FROM changes WHERE {where} GROUP BY spider, kind "
                              "ORDER BY spider, kind", args).fetchall()
        return {(r[0], r[1]): r[2] for r in rows}

    def failing(self, spiders: tuple[str, ...], limit: int) -> tuple[int, list[FailingWatch]]:
        where, args = spiders_where(spiders, "?")
        with self._reading("list the failing keys") as db:
            total = db.execute(f"SELECT count(*) FROM observations WHERE error_streak > 0 AND {where}",
                               args).fetchone()[0]
            rows = db.execute("SELECT spider, key, url, error_streak, last_error, last_good FROM observations "
                              f"WHERE error_streak > 0 AND {where} ORDER BY error_streak DESC, spider, key LIMIT ?",
                              (*args, limit)).fetchall()
        return total, [FailingWatch(*tuple(r)) for r in rows]

    def statuses(self, query: StatusQuery, *, batch_size: int = 1000) -> Iterator[KeyStatus]:
        def fetch(after: tuple[str, str] | None, limit: int) -> list[KeyStatus]:
            sql, args = status_sql("", "?", query, after)
            with self._reading("list the watched keys") as db:
                rows = db.execute(sql, (*args, limit)).fetchall()
                return status_rows(rows, lambda ids: db.execute(last_changes_sql("", "?", len(ids)), ids).fetchall())

        return paged_statuses(fetch, batch_size)

    def open_condition(self, spider: str, site: str, condition: str, since: str, record: dict[str, Any],
                       lease: Lease | None = None) -> int | None:
        with self._transaction(f"log the health condition {condition!r} of {site!r}") as db:
            inserted = db.execute("INSERT INTO health_conditions (spider, site, condition, since, error) "
                                  "VALUES (?,?,?,?,?) ON CONFLICT DO NOTHING",
                                  (spider, site, condition, since, record["error"])).rowcount
            if inserted != 1:
                return None
            change_id = self._log(db, spider, site, "error", record, lease)
            db.execute("UPDATE health_conditions SET change_id=? WHERE spider=? AND site=? AND condition=?",
                       (change_id, spider, site, condition))
            return change_id

    def close_condition(self, spider: str, site: str, condition: str, record: dict[str, Any],
                        lease: Lease | None = None) -> int | None:
        with self._transaction(f"log the end of the health condition {condition!r} of {site!r}") as db:
            deleted = db.execute("DELETE FROM health_conditions WHERE spider=? AND site=? AND condition=?",
                                 (spider, site, condition)).rowcount
            return self._log(db, spider, site, "recovered", record, lease) if deleted == 1 else None
