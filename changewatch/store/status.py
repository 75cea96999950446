"""What ``changewatch status`` reads of every watched key (:class:`StatusStore`): its times, its
error streak, its due time and its last logged change, a batch at a time in key order (keyset
paging on the primary key: each batch one short read, no cursor or lock held between batches,
memory flat whatever the store's size). Both backends share the SQL written here."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

__all__ = ["KeyStatus", "StatusQuery", "StatusStore", "last_changes_sql", "paged_statuses", "status_rows",
           "status_sql"]


@dataclass(frozen=True, slots=True)
class StatusQuery:
    """Which keys :meth:`StatusStore.statuses` lists (empty members: any)."""

    spiders: tuple[str, ...] = ()
    #: only the keys of these site watches: the page set's and the pages'
    site_watches: tuple[str, ...] = ()
    #: only keys whose latest observations failed (an error streak)
    failing: bool = False


@dataclass(frozen=True, slots=True)
class KeyStatus:
    """One watched key as the store keeps it, with its last logged change (id, kind, and the
    error when that change is an ``error``)."""

    spider: str
    key: str
    url: str
    #: a permanent redirect moved it (a ``moved`` observation is counted)
    moved: bool = False
    first_seen: str | None = None
    last_seen: str | None = None
    last_good: str | None = None
    last_changed: str | None = None
    last_error: str | None = None
    error_streak: int = 0
    due_at: str | None = None
    last_change_id: int | None = None
    last_change_kind: str | None = None
    last_change_error: str | None = None


def status_sql(prefix: str, mark: str, query: StatusQuery, after: tuple[str, str] | None) -> tuple[str, list[Any]]:
    """The statement reading a batch of *query*'s keys after *after* (spider, key), and its
    arguments (the batch size is the last one). *prefix* is the tables' schema prefix, *mark* the
    driver's placeholder. The last change is found through the change log's index by key."""
    clauses: list[str] = []
    # the counters are JSON written by changewatch.store.semantics.dumps: a kind counted is a member
    args: list[Any] = ['%"moved":%']
    if after is not None:
        clauses.append(f"(o.spider, o.key) > ({mark}, {mark})")
        args += list(after)
    if query.spiders:
        clauses.append(f"o.spider IN ({', '.join([mark] * len(query.spiders))})")
        args += list(query.spiders)
    if query.site_watches:
        from .changelog import site_watch_where

        clause, more = site_watch_where("o.key", query.site_watches, mark)
        clauses.append(clause)
        args += more
    if query.failing:
        clauses.append("o.error_streak > 0")
    where = " AND ".join(clauses) or "1=1"
    last = (f"(SELECT c.id FROM {prefix}changes c WHERE c.spider = o.spider AND c.key = o.key "
            "ORDER BY c.id DESC LIMIT 1)")
    sql = (f"SELECT o.spider, o.key, o.url, o.counters LIKE {mark}, o.first_seen, o.last_seen, o.last_good, "
           f"o.last_changed, o.last_error, o.error_streak, o.due_at, {last} FROM {prefix}observations o WHERE {where} "
           f"ORDER BY o.spider, o.key LIMIT {mark}")
    return sql, args


def last_changes_sql(prefix: str, mark: str, count: int) -> str:
    """The statement reading the kind of *count* changes by id, and the record of the errors
    among them (an error's record is small; another's may hold a long diff)."""
    return (f"SELECT id, kind, CASE WHEN kind = 'error' THEN record END FROM {prefix}changes WHERE id IN "
            f"({', '.join([mark] * count)})")


def status_rows(rows: list[Any], last_changes: Callable[[list[int]], list[Any]]) -> list[KeyStatus]:
    """*rows* of :func:`status_sql` as statuses; *last_changes* runs :func:`last_changes_sql`
    for the change ids it is given and returns its rows."""
    ids = [row[11] for row in rows if row[11] is not None]
    found = {row[0]: (row[1], _error_of(row[2])) for row in last_changes(ids)} if ids else {}
    statuses = []
    for row in rows:
        kind, error = found.get(row[11], (None, None))
        spider, key, url, moved, first, last, good, changed, failed, streak, due, change_id = row
        statuses.append(KeyStatus(spider, key, url, bool(moved), first, last, good, changed, failed, streak, due,
                                  change_id, kind, error))
    return statuses


def _error_of(record: str | None) -> str | None:
    value = json.loads(record).get("error") if record else None
    return value if isinstance(value, str) else None


def paged_statuses(fetch: Callable[[tuple[str, str] | None, int], list[KeyStatus]],
                   batch_size: int) -> Iterator[KeyStatus]:
    """Every status ``fetch(after, limit)`` gives, a batch at a time, each starting after the
    last (spider, key) of the one before."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be 1 or more, not {batch_size}")
    after: tuple[str, str] | None = None
    while True:
        batch = fetch(after, batch_size)
        yield from batch
        if len(batch) < batch_size:
            return
        after = (batch[-1].spider, batch[-1].key)


@runtime_checkable
class StatusStore(Protocol):
    """Optional: what ``changewatch status`` reads (the built-in stores have it)."""

    def statuses(self, query: StatusQuery, *, batch_size: int = 1000) -> Iterator[KeyStatus]:
        """The keys *query* selects, by spider and key, read *batch_size* at a time, each batch
        its own short read (a key committed meanwhile is listed if it is still ahead)."""
        ...
