"""The SQL both built-in backends share for running for months (:class:`~.base.MaintainedStore`):
the due table, listed marks, evidence written with an observation and read for a change, and the
purges. Written once, with each backend's placeholder, ``greatest`` and table names, so that both
select and delete exactly the same rows."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..core.schedule import DueEntry, epoch
from .base import Evidence, KeptVersion

__all__ = ["BODY_WINDOW", "Dialect", "body_row", "due_entry", "kept_version", "version_row"]

#: seconds: a body no version refers to is deleted only once it was last stored this long ago,
#: so a commit that refers to it (in a transaction still open) never loses it to a purge
BODY_WINDOW = 3600.0

#: the columns of a kept version with its body (``e``: evidence, ``b``: evidence_bodies)
_VERSION_COLUMNS = ("e.id, e.spider, e.key, e.change_id, e.observed_at, e.url, e.status, e.headers, e.digest, "
                    "b.compression, b.body, b.size")


@dataclass(frozen=True, slots=True)
class Dialect:
    """How one backend spells what the statements need."""

    mark: str  # the driver's placeholder
    greatest: str  # the larger of two values (SQLite: max, PostgreSQL: GREATEST)
    prefix: str = ""  # before each table's name (a PostgreSQL schema)
    any_array: bool = False  # ``= ANY(array)`` (PostgreSQL) instead of ``IN (…)``

    def among(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        if self.any_array:
            return f"{column} = ANY({self.mark})", [list(values)]
        return f"{column} IN ({', '.join([self.mark] * len(values))})", list(values)

    def table(self, name: str) -> str:
        return f"{self.prefix}{name}"

    # -- the schedule ------------------------------------------------------------------------------

    def due_table(self) -> str:
        return (f"SELECT key, last_seen, due_at, due_interval, listed_at FROM {self.table('observations')} "
                f"WHERE spider = {self.mark}")

    def mark_listed(self, keys: Sequence[str]) -> tuple[str, list[Any]]:
        among, args = self.among("key", keys)
        return (f"UPDATE {self.table('observations')} SET listed_at = {self.mark} WHERE spider = {self.mark} "
                f"AND {among}"), args

    def _unseen(self) -> str:
        return f"{self.greatest}(coalesce(last_seen, ''), coalesce(listed_at, '')) < {self.mark}"

    # -- evidence ---------------------------------------------------------------------------------

    def insert_body(self) -> str:
        # A body already kept is kept once; its stored_at moves on (which a purge checks again: it
        # waits for this row's lock and then sees it fresh), so the purge never deletes a body a
        # commit in flight refers to.
        m = self.mark
        return (f"INSERT INTO {self.table('evidence_bodies')} (spider, digest, compression, size, stored_at, body) "
                f"VALUES ({m}, {m}, {m}, {m}, {m}, {m}) ON CONFLICT (spider, digest) DO UPDATE SET "
                "stored_at = excluded.stored_at")

    def insert_version(self) -> str:
        m = self.mark
        return (f"INSERT INTO {self.table('evidence')} (spider, key, change_id, observed_at, url, status, headers, "
                f"digest) VALUES ({m}, {m}, {m}, {m}, {m}, {m}, {m}, {m})")

    def change(self) -> str:
        return (f"SELECT id, spider, key, kind, observed_at, record, delivered_at FROM {self.table('changes')} "
                f"WHERE id = {self.mark}")

    def _versions(self, where: str) -> str:
        return (f"SELECT {_VERSION_COLUMNS} FROM {self.table('evidence')} e "
                f"LEFT JOIN {self.table('evidence_bodies')} b ON b.spider = e.spider AND b.digest = e.digest "
                f"WHERE {where} ORDER BY e.id DESC LIMIT 1")

    def after(self) -> str:
        return self._versions(f"e.change_id = {self.mark}")

    def before_version(self) -> str:
        """The kept version before one of the same key (by id)."""
        return self._versions(f"e.spider = {self.mark} AND e.key = {self.mark} AND e.id < {self.mark}")

    def before_time(self) -> str:
        """The kept version of a key fetched before a time (when the change's own is not kept)."""
        return self._versions(f"e.spider = {self.mark} AND e.key = {self.mark} AND e.observed_at < {self.mark}")

    # -- purges: candidates (a LIMIT), then a delete that checks the condition again -----------------

    def forget_candidates(self) -> str:
        return (f"SELECT key FROM {self.table('observations')} WHERE spider = {self.mark} AND {self._unseen()} "
                f"LIMIT {self.mark}")

    def forget_keys(self, keys: Sequence[str]) -> tuple[str, list[Any]]:
        among, args = self.among("key", keys)
        return (f"DELETE FROM {self.table('observations')} WHERE spider = {self.mark} AND {among} AND "
                f"{self._unseen()} RETURNING key"), args

    def delete_of_keys(self, table: str, keys: Sequence[str]) -> tuple[str, list[Any]]:
        among, args = self.among("key", keys)
        return f"DELETE FROM {self.table(table)} WHERE spider = {self.mark} AND {among}", args

    def old_versions(self) -> str:
        e = self.table("evidence")
        return (f"SELECT id FROM {e} old WHERE old.spider = {self.mark} AND old.observed_at < {self.mark} AND EXISTS "
                f"(SELECT 1 FROM {e} newer WHERE newer.spider = old.spider AND newer.key = old.key "
                f"AND newer.id > old.id) LIMIT {self.mark}")

    def delete_ids(self, table: str, ids: Sequence[int], condition: str = "") -> tuple[str, list[Any]]:
        among, args = self.among("id", ids)
        return f"DELETE FROM {self.table(table)} WHERE {among}{condition}", args

    def _unreferenced(self) -> str:
        return (f"stored_at < {self.mark} AND NOT EXISTS (SELECT 1 FROM {self.table('evidence')} e "
                f"WHERE e.spider = {self.table('evidence_bodies')}.spider "
                f"AND e.digest = {self.table('evidence_bodies')}.digest)")

    def unreferenced_bodies(self) -> str:
        return (f"SELECT digest FROM {self.table('evidence_bodies')} WHERE spider = {self.mark} "
                f"AND {self._unreferenced()} LIMIT {self.mark}")

    def delete_bodies(self, digests: Sequence[str]) -> tuple[str, list[Any]]:
        among, args = self.among("digest", digests)
        return (f"DELETE FROM {self.table('evidence_bodies')} WHERE spider = {self.mark} AND {among} "
                f"AND {self._unreferenced()}"), args

    def old_changes(self) -> str:
        return (f"SELECT id FROM {self.table('changes')} WHERE spider = {self.mark} AND delivered_at IS NOT NULL "
                f"AND observed_at < {self.mark} ORDER BY id LIMIT {self.mark}")


def due_entry(row: Sequence[Any]) -> tuple[str, DueEntry]:
    """A key and its :class:`DueEntry` from a row of :meth:`Dialect.due_table`."""
    key, last_seen, due_at, interval, listed_at = tuple(row)
    return key, DueEntry(epoch(last_seen), epoch(due_at), None if interval is None else float(interval),
                         epoch(listed_at))


def kept_version(row: Sequence[Any] | None) -> KeptVersion | None:
    if row is None:
        return None
    id_, spider, key, change_id, observed_at, url, status, headers, digest, compression, body, size = tuple(row)
    return KeptVersion(id_, spider, key, change_id, observed_at, url, status, headers, digest, compression,
                       None if body is None else bytes(body), size)


def body_row(spider: str, evidence: Evidence, stored_at: str) -> tuple[Any, ...]:
    body = evidence.body
    return spider, body.digest, body.compression, body.size, stored_at, body.data


def version_row(spider: str, key: str, change_id: int | None, observed_at: str, evidence: Evidence) -> tuple[Any, ...]:
    return spider, key, change_id, observed_at, evidence.url, evidence.status, evidence.headers, evidence.body.digest
