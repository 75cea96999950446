"""The PostgreSQL store's part in running for months (base.MaintainedStore): each step of
:mod:`.upkeep` in a transaction of its own, retried after a transient failure as the store's other
calls are (each purge is idempotent: run twice, it deletes nothing twice). A mixin of
:class:`changewatch.store.postgresql.PostgreSQLStore`."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from ...core.schedule import DueEntry
from ..records import ChangeEvidence, Evidence
from ..semantics import format_time
from ..upkeep import Dialect

__all__ = ["PostgreSQLUpkeep"]

T = TypeVar("T")

#: a stored time moved by a number of seconds, in the form the store writes times
_SHIFTED = ("to_char(({time})::timestamptz AT TIME ZONE 'UTC' + ({seconds}) * interval '1 second', "
            "'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')")


class PostgreSQLUpkeep:
    """Due states, listed marks, evidence and purges of one PostgreSQL store."""

    if TYPE_CHECKING:  # provided by PostgreSQLStore
        _quoted: str

        def _retrying(self, doing: str, work: Callable[[Any, Any], T], *, once: bool = False,
                      statement: bool = False) -> T: ...

    @property
    def _sql(self) -> Dialect:
        return Dialect(mark="%s", greatest="GREATEST", prefix=f"{self._quoted}.", any_array=True,
                       shifted=_SHIFTED, by_code_point=' COLLATE "C"')

    def _write_evidence(self, cur: Any, spider: str, key: str, change_id: int | None, observed_at: str,
                        evidence: Evidence, now: datetime) -> None:
        self._sql.write_evidence(cur, spider, key, change_id, observed_at, evidence, format_time(now))

    def site_pages(self, spider: str, site: str, after: str = "",
                   limit: int = 1000) -> list[tuple[str, DueEntry | None]]:
        return self._retrying("read a site's page set",
                              lambda cur, _: self._sql.site_pages(cur, spider, site, after, limit), statement=True)

    def site_spec(self, spider: str, site: str) -> str | None:
        return self._retrying("read a site's page set", lambda cur, _: self._sql.site_spec(cur, spider, site),
                              statement=True)

    def due_entries(self, spider: str, keys: Sequence[str]) -> Mapping[str, DueEntry]:
        return self._retrying("read the schedule", lambda cur, _: self._sql.due_entries(cur, spider, keys),
                              statement=True)

    def bound_schedule(self, spider: str, minimum: float, maximum: float) -> int:
        return self._retrying("move due times within the schedule's bounds",
                              lambda cur, _: self._sql.bound_schedule(cur, spider, minimum, maximum))

    def mark_listed(self, spider: str, keys: Sequence[str], at: str) -> None:
        if keys:
            self._retrying("note the keys still watched", lambda cur, _: self._sql.mark_listed(cur, spider, keys, at))

    def forget(self, spider: str, before: str, limit: int, bodies_before: str) -> list[str]:
        return self._retrying("forget keys no longer watched",
                              lambda cur, _: self._sql.forget(cur, spider, before, limit, bodies_before))

    def purge_evidence(self, spider: str, before: str, limit: int, bodies_before: str) -> int:
        return self._retrying("delete evidence past its retention",
                              lambda cur, _: self._sql.purge_evidence(cur, spider, before, limit, bodies_before))

    def purge_changes(self, spider: str, before: str, limit: int) -> int:
        return self._retrying("delete delivered changes past their retention",
                              lambda cur, _: self._sql.purge_changes(cur, spider, before, limit))

    def change_evidence(self, change_id: int) -> ChangeEvidence | None:
        return self._retrying("read a change's evidence", lambda cur, _: self._sql.change_evidence(cur, change_id))
