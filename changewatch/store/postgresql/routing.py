"""The PostgreSQL store's part of :class:`~.base.RoutingStore`: notifications' delivery state,
summaries written into logged records, and the day's spend on summaries. A mixin of
:class:`changewatch.store.postgresql.PostgreSQLStore`; every call is one transaction run through
the store's retrying (a lost connection is tried again, as the crawl's own calls are)."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from ..changelog import discard_where
from ..records import NotificationState, Outcome, PendingNotification
from ..semantics import record_json

__all__ = ["PostgreSQLRouting", "write_notifications"]

T = TypeVar("T")


def write_notifications(cur: Any, quoted: str, spider: str, change_id: int, outcome: Outcome) -> None:
    """The pending notifications of a change just logged (in the commit's transaction)."""
    if outcome.notify:
        cur.executemany(f"INSERT INTO {quoted}.notifications (change_id, destination, spider, shown) "
                        "VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
                        [(change_id, destination, spider, shown) for destination, shown in outcome.notify])


class PostgreSQLRouting:
    if TYPE_CHECKING:  # provided by PostgreSQLStore
        _quoted: str

        def _retrying(self, doing: str, work: Callable[[Any, Any], T], *, once: bool = False,
                      statement: bool = False) -> T: ...

    def claim_notifications(self, destinations: Collection[str], owner: str, seconds: float, *,
                            spider: str | None = None, since: str | None = None,
                            limit: int = 1000) -> list[PendingNotification]:
        wanted = sorted(set(destinations))
        if not wanted:
            return []
        q = self._quoted
        where = ["n.destination = ANY(%s)", "n.sent_at IS NULL", "n.discarded_at IS NULL",
                 "(n.claim_owner IS NULL OR n.claim_expires <= now() OR n.claim_owner = %s)"]
        args: list[Any] = [wanted, owner]
        if spider is not None:
            where.append("n.spider = %s")
            args.append(spider)
        if since is not None:
            where.append("c.observed_at >= %s")
            args.append(since)
        # rows another claim holds are skipped, not waited for; taken twice, a claim returns its own rows again
        sql = (f"WITH picked AS (SELECT n.change_id, n.destination FROM {q}.notifications n JOIN {q}.changes c "
               f"ON c.id = n.change_id WHERE {' AND '.join(where)} ORDER BY n.change_id, n.destination LIMIT %s "
               f"FOR UPDATE OF n SKIP LOCKED) UPDATE {q}.notifications n SET claim_owner = %s, "
               f"claim_expires = now() + make_interval(secs => %s) FROM picked p, {q}.changes c "
               "WHERE n.change_id = p.change_id AND n.destination = p.destination AND c.id = n.change_id "
               "RETURNING n.change_id, n.destination, c.spider, c.key, c.kind, c.observed_at, c.record, n.attempts")
        rows = self._retrying("claim notifications",
                              lambda cur, _: cur.execute(sql, (*args, limit, owner, seconds)).fetchall())
        found = [PendingNotification(r[0], r[1], r[2], r[3], r[4], r[5], json.loads(r[6]), r[7]) for r in rows]
        return sorted(found, key=lambda p: (p.change_id, p.destination))

    def settle_notifications(self, destination: str, ids: Sequence[int], owner: str, *, sent_at: str | None,
                             error: str | None = None, attempts: int = 1) -> None:
        if not ids:
            return
        # Idempotent (only unsent rows): a retry after a lost acknowledgement counts no second attempt.
        self._retrying("settle notifications", lambda cur, _: cur.execute(
            f"UPDATE {self._quoted}.notifications SET sent_at = %s, last_error = %s, attempts = attempts + %s, "
            "claim_owner = NULL, claim_expires = NULL WHERE destination = %s AND sent_at IS NULL "
            "AND change_id = ANY(%s) AND (claim_owner IS NULL OR claim_owner = %s)",
            (sent_at, None if sent_at else error, attempts, destination, list(ids), owner)))

    def notification_states(self, *, spider: str | None = None, since: str | None = None,
                            pending: bool = True) -> list[NotificationState]:
        q = self._quoted
        where, args = ["true"], []
        if pending:
            where.append("n.sent_at IS NULL AND n.discarded_at IS NULL")
        if spider is not None:
            where.append("n.spider = %s")
            args.append(spider)
        if since is not None:
            where.append("c.observed_at >= %s")
            args.append(since)
        sql = ("SELECT n.change_id, n.destination, n.shown, n.spider, c.key, c.kind, c.observed_at, n.sent_at, "
               f"n.attempts, n.last_error, n.discarded_at FROM {q}.notifications n JOIN {q}.changes c "
               "ON c.id = n.change_id "
               f"WHERE {' AND '.join(where)} ORDER BY n.change_id, n.destination COLLATE \"C\"")
        rows = self._retrying("read notifications", lambda cur, _: cur.execute(sql, args).fetchall(), statement=True)
        return [NotificationState(*tuple(r)) for r in rows]

    def discard_notifications(self, destination: str | None, at: str, *, before: str | None = None,
                              spider: str | None = None) -> int | None:
        q = self._quoted
        where, args = discard_where(destination, spider, before, "%s", f"{q}.changes")

        def work(cur: Any, _: Any) -> int | None:
            # Idempotent: a retry after a lost acknowledgement finds them discarded and the destination known
            done = cur.execute(f"UPDATE {q}.notifications n SET discarded_at = %s, claim_owner = NULL, "
                               f"claim_expires = NULL WHERE {where}", [at, *args]).rowcount
            if done or destination is None:
                return int(done)
            known = cur.execute(f"SELECT 1 FROM {q}.notifications WHERE destination = %s OR shown = %s LIMIT 1",
                                (destination, destination)).fetchone()
            return 0 if known else None
        return self._retrying("discard notifications", work)

    def record_summary(self, spider: str, change_id: int, summary: str) -> bool:
        def work(cur: Any, _: Any) -> bool:
            row = cur.execute(f"SELECT record FROM {self._quoted}.changes WHERE id = %s AND spider = %s FOR UPDATE",
                              (change_id, spider)).fetchone()
            if row is None:
                return False
            record = json.loads(row[0])
            record["summary"] = summary
            cur.execute(f"UPDATE {self._quoted}.changes SET record = %s WHERE id = %s",
                        (record_json(record), change_id))
            return True
        return self._retrying("write a summary into the change log", work)

    def add_spend(self, day: str, cost: float, budget: float | None, *, calls: int = 1) -> bool:
        def work(cur: Any, _: Any) -> bool:
            cur.execute(f"INSERT INTO {self._quoted}.summary_spend (day) VALUES (%s) ON CONFLICT DO NOTHING", (day,))
            # the row lock of this UPDATE orders the processes of the day: none sees a spend another is adding
            cur.execute(f"UPDATE {self._quoted}.summary_spend SET cost = cost + %s, calls = calls + %s "
                        "WHERE day = %s AND (%s::double precision IS NULL OR %s <= 0 OR cost + %s <= %s)",
                        (cost, calls, day, budget, cost, cost, budget))
            return bool(cur.rowcount == 1)
        # not once=True: a lost acknowledgement could count one call twice, which only errs towards spending less
        return self._retrying("count the summaries' spend", work)

    def spend(self, day: str) -> tuple[float, int]:
        row = self._retrying("read the summaries' spend", lambda cur, _: cur.execute(
            f"SELECT cost, calls FROM {self._quoted}.summary_spend WHERE day = %s", (day,)).fetchone(), statement=True)
        return (float(row[0]), int(row[1])) if row is not None else (0.0, 0)
