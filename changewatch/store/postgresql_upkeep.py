"""The PostgreSQL store's part in running for months (base.MaintainedStore): the due table,
listed marks, evidence, purges. A mixin of :class:`changewatch.store.postgresql.PostgreSQLStore`;
every call is one transaction, retried after a transient failure as the store's others are
(each purge is idempotent: run twice, it deletes nothing more than once)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from ..core.schedule import DueEntry
from .base import ChangeEvidence, Evidence
from .changelog import entry
from .semantics import format_time
from .upkeep import Dialect, body_row, due_entry, kept_version, version_row

__all__ = ["PostgreSQLUpkeep"]

T = TypeVar("T")


class PostgreSQLUpkeep:
    """The due table, listed marks, evidence and purges of one PostgreSQL store."""

    if TYPE_CHECKING:  # provided by PostgreSQLStore
        _quoted: str

        def _retrying(self, doing: str, work: Callable[[Any, Any], T], *, once: bool = False,
                      statement: bool = False) -> T: ...

    @property
    def _sql(self) -> Dialect:
        return Dialect(mark="%s", greatest="GREATEST", prefix=f"{self._quoted}.", any_array=True)

    def _write_evidence(self, cur: Any, spider: str, key: str, change_id: int | None, observed_at: str,
                        evidence: Evidence, now: Any) -> None:
        """In an observation's transaction: its body (once per digest) and the version."""
        cur.execute(self._sql.insert_body(), body_row(spider, evidence, format_time(now)))
        cur.execute(self._sql.insert_version(), version_row(spider, key, change_id, observed_at, evidence))

    def due_table(self, spider: str) -> dict[str, DueEntry]:
        rows = self._retrying("read the schedule", lambda cur, _: cur.execute(self._sql.due_table(), (spider,))
                              .fetchall(), statement=True)
        return dict(due_entry(row) for row in rows)

    def mark_listed(self, spider: str, keys: Sequence[str], at: str) -> None:
        if not keys:
            return
        sql, args = self._sql.mark_listed(keys)
        self._retrying("note the keys still watched", lambda cur, _: cur.execute(sql, (at, spider, *args)))

    def forget(self, spider: str, before: str, limit: int) -> list[str]:
        sql = self._sql

        def work(cur: Any, _: Any) -> list[str]:
            keys = [r[0] for r in cur.execute(sql.forget_candidates(), (spider, before, limit)).fetchall()]
            if not keys:
                return []
            delete, args = sql.forget_keys(keys)
            forgotten = [r[0] for r in cur.execute(delete, (spider, *args, before)).fetchall()]
            for table in ("validators", "evidence") if forgotten else ():
                delete, args = sql.delete_of_keys(table, forgotten)
                cur.execute(delete, (spider, *args))
            return forgotten

        return self._retrying("forget keys no longer watched", work)

    def purge_evidence(self, spider: str, before: str, limit: int) -> int:
        sql = self._sql

        def work(cur: Any, _: Any) -> int:
            ids = [r[0] for r in cur.execute(sql.old_versions(), (spider, before, limit)).fetchall()]
            if ids:
                delete, args = sql.delete_ids("evidence", ids)
                cur.execute(delete, args)
            return len(ids)

        return self._retrying("delete evidence past its retention", work)

    def purge_bodies(self, spider: str, before: str, limit: int) -> int:
        sql = self._sql

        def work(cur: Any, _: Any) -> int:
            digests = [r[0] for r in cur.execute(sql.unreferenced_bodies(), (spider, before, limit)).fetchall()]
            if not digests:
                return 0
            delete, args = sql.delete_bodies(digests)
            return int(cur.execute(delete, (spider, *args, before)).rowcount)

        return self._retrying("delete bodies no evidence refers to", work)

    def purge_changes(self, spider: str, before: str, limit: int) -> int:
        sql = self._sql

        def work(cur: Any, _: Any) -> int:
            ids = [r[0] for r in cur.execute(sql.old_changes(), (spider, before, limit)).fetchall()]
            if not ids:
                return 0
            delete, args = sql.delete_ids("changes", ids, " AND delivered_at IS NOT NULL")
            return int(cur.execute(delete, args).rowcount)

        return self._retrying("delete delivered changes past their retention", work)

    def change_evidence(self, change_id: int) -> ChangeEvidence | None:
        sql = self._sql

        def work(cur: Any, _: Any) -> ChangeEvidence | None:
            row = cur.execute(sql.change(), (change_id,)).fetchone()
            if row is None:
                return None
            change = entry(row)
            after = kept_version(cur.execute(sql.after(), (change_id,)).fetchone())
            if after is not None:
                before = cur.execute(sql.before_version(), (change.spider, change.key, after.id)).fetchone()
            else:
                before = cur.execute(sql.before_time(), (change.spider, change.key, change.observed_at)).fetchone()
            return ChangeEvidence(change, kept_version(before), after)

        return self._retrying("read a change's evidence", work)
