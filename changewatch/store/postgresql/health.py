"""The PostgreSQL store's health history and conditions (:class:`~.health.HealthStore`): a mixin
of :class:`changewatch.store.postgresql.PostgreSQLStore`. Opening a condition is one transaction
whose ``INSERT … ON CONFLICT DO NOTHING`` decides, under the row's lock, which of several crawls
finishing at once logs it: exactly one."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from ..changelog import query_where
from ..health import (
    FailingWatch,
    HistoryQuery,
    HistoryRow,
    OpenCondition,
    history_args,
    history_entry,
    history_upsert,
    history_where,
    spiders_where,
)
from ..records import ChangeQuery, Lease
from ..semantics import record_json
from ..status import KeyStatus, StatusQuery, last_changes_sql, paged_statuses, status_rows, status_sql
from .retry import Attempt

__all__ = ["PostgreSQLHealth"]

T = TypeVar("T")


class PostgreSQLHealth:
    if TYPE_CHECKING:  # provided by PostgreSQLStore
        _quoted: str

        def _retrying(self, doing: str, work: Callable[[Any, Attempt], T], *, once: bool = False,
                      statement: bool = False) -> T: ...

    def _counted(self, spider: str, outcome: Any, observed_at: str) -> tuple[str, tuple[Any, ...]]:
        """The observation counted in the health history, as a ``WITH`` the commit's write of the
        key's state carries (one statement, no round trip more), and its arguments."""
        upsert = history_upsert(f"{self._quoted}.", "%s", "GREATEST")
        return f"WITH counted AS ({upsert})", history_args(spider, history_entry(outcome, observed_at))

    def _log(self, cur: Any, spider: str, key: str, kind: str, record: dict[str, Any], lease: Lease | None) -> int:
        cur.execute(f"INSERT INTO {self._quoted}.changes (spider, key, kind, observed_at, record, lease_owner, "
                    "lease_expires) VALUES (%s, %s, %s, %s, %s, %s, now() + make_interval(secs => %s)) RETURNING id",
                    (spider, key, kind, record["observed_at"], record_json(record), lease.owner if lease else None,
                     lease.seconds if lease else None))
        change_id: int = cur.fetchone()[0]
        return change_id

    def history(self, query: HistoryQuery) -> Iterator[HistoryRow]:
        where, args = history_where(query, "%s")
        rows = self._retrying("read the health history", lambda cur, _: cur.execute(
            "SELECT spider, site, day, kind, count, distances, distance_sum, distance_max "
            f"FROM {self._quoted}.health_history WHERE {where} "
            'ORDER BY spider COLLATE "C", site COLLATE "C", day, kind COLLATE "C"', args).fetchall(), statement=True)
        return iter([HistoryRow(*r) for r in rows])

    def conditions(self, spider: str | None) -> list[OpenCondition]:
        where, args = spiders_where((spider,) if spider is not None else (), "%s")
        rows = self._retrying("read the open health conditions", lambda cur, _: cur.execute(
            f"SELECT spider, site, condition, since, error, change_id FROM {self._quoted}.health_conditions "
            f'WHERE {where} ORDER BY spider COLLATE "C", site COLLATE "C", condition COLLATE "C"', args).fetchall(),
            statement=True)
        return [OpenCondition(*r) for r in rows]

    def change_counts(self, query: ChangeQuery) -> dict[tuple[str, str], int]:
        where, args = query_where(query, 0, "%s")
        rows = self._retrying("count the change log", lambda cur, _: cur.execute(
            f"SELECT spider, kind, count(*) FROM {self._quoted}.changes WHERE {where} GROUP BY spider, kind",
            args).fetchall(), statement=True)
        return dict(sorted(((r[0], r[1]), r[2]) for r in rows))

    def failing(self, spiders: tuple[str, ...], limit: int) -> tuple[int, list[FailingWatch]]:
        where, args = spiders_where(spiders, "%s")

        def work(cur: Any, _: Attempt) -> tuple[int, list[FailingWatch]]:
            table = f"{self._quoted}.observations"
            total: int = cur.execute(f"SELECT count(*) FROM {table} WHERE error_streak > 0 AND {where}",
                                     args).fetchone()[0]
            rows = cur.execute(f"SELECT spider, key, url, error_streak, last_error, last_good FROM {table} "
                               f'WHERE error_streak > 0 AND {where} ORDER BY error_streak DESC, spider COLLATE "C", '
                               'key COLLATE "C" LIMIT %s', (*args, limit)).fetchall()
            return total, [FailingWatch(*r) for r in rows]
        return self._retrying("list the failing keys", work)

    def statuses(self, query: StatusQuery, *, batch_size: int = 1000) -> Iterator[KeyStatus]:
        prefix = f"{self._quoted}."

        def fetch(after: tuple[str, str] | None, limit: int) -> list[KeyStatus]:
            sql, args = status_sql(prefix, "%s", query, after)

            def work(cur: Any, _: Attempt) -> list[KeyStatus]:
                rows = cur.execute(sql, (*args, limit)).fetchall()
                return status_rows(rows, lambda ids: cur.execute(last_changes_sql(prefix, "%s", len(ids)),
                                                                 ids).fetchall())
            return self._retrying("list the watched keys", work)

        return paged_statuses(fetch, batch_size)

    def open_condition(self, spider: str, site: str, condition: str, since: str, record: dict[str, Any],
                       lease: Lease | None = None) -> int | None:
        def work(cur: Any, attempt: Attempt) -> int | None:
            attempt.xid, attempt.backend = cur.execute("SELECT txid_current(), pg_backend_pid()").fetchone()
            cur.execute(f"INSERT INTO {self._quoted}.health_conditions (spider, site, condition, since, error) "
                        "VALUES (%s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                        (spider, site, condition, since, record["error"]))
            if cur.rowcount != 1:
                return None
            change_id = self._log(cur, spider, site, "error", record, lease)
            cur.execute(f"UPDATE {self._quoted}.health_conditions SET change_id = %s WHERE spider = %s AND site = %s "
                        "AND condition = %s", (change_id, spider, site, condition))
            return change_id
        return self._retrying(f"log the health condition {condition!r} of {site!r}", work, once=True)

    def close_condition(self, spider: str, site: str, condition: str, record: dict[str, Any],
                        lease: Lease | None = None) -> int | None:
        def work(cur: Any, attempt: Attempt) -> int | None:
            attempt.xid, attempt.backend = cur.execute("SELECT txid_current(), pg_backend_pid()").fetchone()
            cur.execute(f"DELETE FROM {self._quoted}.health_conditions WHERE spider = %s AND site = %s "
                        "AND condition = %s", (spider, site, condition))
            return self._log(cur, spider, site, "recovered", record, lease) if cur.rowcount == 1 else None
        return self._retrying(f"log the end of the health condition {condition!r} of {site!r}", work, once=True)
