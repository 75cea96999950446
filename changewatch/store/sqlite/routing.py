"""The SQLite store's part of :class:`~.base.RoutingStore`: notifications' delivery state, summaries
written into logged records, and the day's spend on summaries. A mixin of
:class:`changewatch.store.sqlite.SQLiteStore`, kept apart so the crawl's commit path reads on its own."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection, Iterator, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..changelog import discard_where
from ..records import NotificationState, Outcome, PendingNotification
from ..semantics import record_json

__all__ = ["SQLiteRouting", "write_notifications"]

_CHUNK = 400


def write_notifications(db: sqlite3.Connection, spider: str, change_id: int, outcome: Outcome) -> None:
    """The pending notifications of a change just logged (in the commit's transaction)."""
    if outcome.notify:
        db.executemany("INSERT OR IGNORE INTO notifications (change_id, destination, spider, shown) VALUES (?,?,?,?)",
                       [(change_id, destination, spider, shown) for destination, shown in outcome.notify])


def _chunks(values: Sequence[Any]) -> Iterator[list[Any]]:
    for start in range(0, len(values), _CHUNK):
        yield list(values[start:start + _CHUNK])


class SQLiteRouting:
    if TYPE_CHECKING:  # provided by SQLiteStore
        def _transaction(self, doing: str) -> AbstractContextManager[sqlite3.Connection]: ...

        def _reading(self, doing: str) -> AbstractContextManager[sqlite3.Connection]: ...

        def now(self) -> datetime: ...

    def claim_notifications(self, destinations: Collection[str], owner: str, seconds: float, *,
                            spider: str | None = None, since: str | None = None,
                            limit: int = 1000) -> list[PendingNotification]:
        wanted = sorted(set(destinations))
        if not wanted:
            return []
        now = self.now().timestamp()
        where = [f"n.destination IN ({', '.join('?' * len(wanted))})", "n.sent_at IS NULL", "n.discarded_at IS NULL",
                 "(n.claim_owner IS NULL OR n.claim_expires <= ? OR n.claim_owner = ?)"]
        args: list[Any] = [*wanted, now, owner]
        if spider is not None:
            where.append("n.spider = ?")
            args.append(spider)
        if since is not None:
            where.append("c.observed_at >= ?")
            args.append(since)
        with self._transaction("claim notifications") as db:  # the write lock: nobody claims meanwhile
            rows = db.execute("SELECT n.change_id, n.destination, c.spider, c.key, c.kind, c.observed_at, c.record, "
                              "n.attempts FROM notifications n JOIN changes c ON c.id = n.change_id "
                              f"WHERE {' AND '.join(where)} ORDER BY n.change_id, n.destination LIMIT ?",
                              (*args, limit)).fetchall()
            db.executemany("UPDATE notifications SET claim_owner=?, claim_expires=? "
                           "WHERE change_id=? AND destination=?",
                           [(owner, now + seconds, r[0], r[1]) for r in rows])
        return [PendingNotification(r[0], r[1], r[2], r[3], r[4], r[5], json.loads(r[6]), r[7]) for r in rows]

    def settle_notifications(self, destination: str, ids: Sequence[int], owner: str, *, sent_at: str | None,
                             error: str | None = None, attempts: int = 1) -> None:
        with self._transaction("settle notifications") as db:
            for chunk in _chunks(ids):
                marks = ", ".join("?" * len(chunk))
                db.execute("UPDATE notifications SET sent_at=?, last_error=?, attempts=attempts+?, claim_owner=NULL, "
                           f"claim_expires=NULL WHERE destination=? AND sent_at IS NULL AND change_id IN ({marks}) "
                           "AND (claim_owner IS NULL OR claim_owner=?)",
                           (sent_at, None if sent_at else error, attempts, destination, *chunk, owner))

    def notification_states(self, *, spider: str | None = None, since: str | None = None,
                            pending: bool = True) -> list[NotificationState]:
        where, args = ["1=1"], []
        if pending:
            where.append("n.sent_at IS NULL AND n.discarded_at IS NULL")
        if spider is not None:
            where.append("n.spider = ?")
            args.append(spider)
        if since is not None:
            where.append("c.observed_at >= ?")
            args.append(since)
        with self._reading("read notifications") as db:
            rows = db.execute("SELECT n.change_id, n.destination, n.shown, n.spider, c.key, c.kind, c.observed_at, "
                              "n.sent_at, n.attempts, n.last_error, n.discarded_at FROM notifications n "
                              f"JOIN changes c ON c.id = n.change_id WHERE {' AND '.join(where)} "
                              "ORDER BY n.change_id, n.destination",
                              args).fetchall()
        return [NotificationState(*tuple(r)) for r in rows]

    def discard_notifications(self, destination: str | None, at: str, *, before: str | None = None,
                              spider: str | None = None) -> int | None:
        where, args = discard_where(destination, spider, before, "?")
        with self._transaction("discard notifications") as db:
            done = db.execute("UPDATE notifications AS n SET discarded_at = ?, claim_owner = NULL, "
                              f"claim_expires = NULL WHERE {where}", [at, *args]).rowcount
            if done or destination is None:
                return int(done)
            known = db.execute("SELECT 1 FROM notifications WHERE destination = ? OR shown = ? LIMIT 1",
                               (destination, destination)).fetchone()
        return 0 if known else None

    def record_summary(self, spider: str, change_id: int, summary: str) -> bool:
        with self._transaction("write a summary into the change log") as db:
            row = db.execute("SELECT record FROM changes WHERE id=? AND spider=?", (change_id, spider)).fetchone()
            if row is None:
                return False
            record = json.loads(row[0])
            record["summary"] = summary
            db.execute("UPDATE changes SET record=? WHERE id=?", (record_json(record), change_id))
        return True

    def add_spend(self, day: str, cost: float, budget: float | None, *, calls: int = 1) -> bool:
        with self._transaction("count the summaries' spend") as db:
            row = db.execute("SELECT cost FROM summary_spend WHERE day=?", (day,)).fetchone()
            spent = row[0] if row is not None else 0.0
            if budget is not None and cost > 0 and spent + cost > budget:
                return False
            db.execute("INSERT INTO summary_spend (day, cost, calls) VALUES (?,?,?) ON CONFLICT (day) DO UPDATE "
                       "SET cost = cost + excluded.cost, calls = calls + excluded.calls", (day, cost, calls))
        return True

    def spend(self, day: str) -> tuple[float, int]:
        with self._reading("read the summaries' spend") as db:
            row = db.execute("SELECT cost, calls FROM summary_spend WHERE day=?", (day,)).fetchone()
        return (float(row[0]), int(row[1])) if row is not None else (0.0, 0)
