"""The SQLite store's part in running for months (base.MaintainedStore): each step of
:mod:`.upkeep` in a transaction of its own. A mixin of :class:`changewatch.store.sqlite.SQLiteStore`,
kept apart so that the crawl's path (opening, committing) reads on its own."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import TYPE_CHECKING

from ...core.schedule import DueEntry
from ..records import ChangeEvidence, Evidence
from ..semantics import format_time
from ..upkeep import Dialect

__all__ = ["SQLiteUpkeep"]

SQL = Dialect(mark="?", greatest="max")


class SQLiteUpkeep:
    """Due states, listed marks, evidence and purges of one SQLite store."""

    if TYPE_CHECKING:  # provided by SQLiteStore
        def _transaction(self, doing: str) -> AbstractContextManager[sqlite3.Connection]: ...

        def _reading(self, doing: str) -> AbstractContextManager[sqlite3.Connection]: ...

    @staticmethod
    def _write_evidence(db: sqlite3.Connection, spider: str, key: str, change_id: int | None, observed_at: str,
                        evidence: Evidence, now: datetime) -> None:
        SQL.write_evidence(db, spider, key, change_id, observed_at, evidence, format_time(now))

    def site_pages(self, spider: str, site: str, after: str = "",
                   limit: int = 1000) -> list[tuple[str, DueEntry | None]]:
        with self._reading("read a site's page set") as db:
            return SQL.site_pages(db, spider, site, after, limit)

    def site_spec(self, spider: str, site: str) -> str | None:
        with self._reading("read a site's page set") as db:
            return SQL.site_spec(db, spider, site)

    def due_entries(self, spider: str, keys: Sequence[str]) -> Mapping[str, DueEntry]:
        with self._reading("read the schedule") as db:
            return SQL.due_entries(db, spider, keys)

    def bound_schedule(self, spider: str, minimum: float, maximum: float) -> int:
        with self._transaction("move due times within the schedule's bounds") as db:
            return SQL.bound_schedule(db, spider, minimum, maximum)

    def mark_listed(self, spider: str, keys: Sequence[str], at: str) -> None:
        if keys:
            with self._transaction("note the keys still watched") as db:
                SQL.mark_listed(db, spider, keys, at)

    def forget(self, spider: str, before: str, limit: int, bodies_before: str) -> list[str]:
        with self._transaction("forget keys no longer watched") as db:
            return SQL.forget(db, spider, before, limit, bodies_before)

    def purge_evidence(self, spider: str, before: str, limit: int, bodies_before: str) -> int:
        with self._transaction("delete evidence past its retention") as db:
            return SQL.purge_evidence(db, spider, before, limit, bodies_before)

    def purge_changes(self, spider: str, before: str, limit: int) -> int:
        with self._transaction("delete delivered changes past their retention") as db:
            return SQL.purge_changes(db, spider, before, limit)

    def change_evidence(self, change_id: int) -> ChangeEvidence | None:
        with self._reading("read a change's evidence") as db:
            return SQL.change_evidence(db, change_id)
