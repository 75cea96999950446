"""What both built-in backends share to list the change log (:class:`~.base.ChangeLogStore`) and to
move a store (:class:`~.base.TransferableStore`): the SQL of a :class:`~.base.ChangeQuery`, the
paging, and the messages. Written once, so that both select exactly the same rows."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from .errors import OlderSchema, StoreNotEmpty
from .records import TRANSFER_TABLES, ChangeQuery, LogEntry

__all__ = ["ENTRY_COLUMNS", "EXPORT_ORDER", "discard_where", "entry", "insert_sql", "not_empty", "older_schema",
           "paged", "query_where"]

#: the columns of a :class:`LogEntry`, in the order :func:`entry` reads them
ENTRY_COLUMNS = "id, spider, key, kind, observed_at, record, delivered_at"


def query_where(query: ChangeQuery, after_id: int, mark: str) -> tuple[str, list[Any]]:
    """The WHERE clause (without ``WHERE``) selecting *query*'s changes above *after_id*, and its
    arguments; *mark* is the driver's placeholder (``?``, ``%s``).

    >>> query_where(ChangeQuery(kinds=("field", "error"), undelivered=True), 7, "?")
    ('id > ? AND kind IN (?, ?) AND delivered_at IS NULL', [7, 'field', 'error'])
    """
    clauses: list[str] = [f"id > {mark}"]
    args: list[Any] = [after_id]
    for column, values in (("spider", query.spiders), ("key", query.keys), ("kind", query.kinds)):
        if values:
            clauses.append(f"{column} IN ({', '.join([mark] * len(values))})")
            args += values
    if query.site_watches:
        clause, more = site_watch_where("key", query.site_watches, mark)
        clauses.append(clause)
        args += more
    if query.since is not None:
        # Times are stored as the crawl writes them (UTC, seconds, Z): their text order is their time order.
        clauses.append(f"observed_at >= {mark}")
        args.append(query.since)
    if query.undelivered:
        clauses.append("delivered_at IS NULL")
    return " AND ".join(clauses), args


def site_watch_where(column: str, site_watches: tuple[str, ...], mark: str) -> tuple[str, list[Any]]:
    """The condition selecting the keys of *site_watches* in *column*: each site watch's own key
    (its page set) and its pages' (``KEY|`` and the page's URL), and its arguments.

    >>> site_watch_where("key", ("docs",), "?")
    ('(key = ? OR substr(key, 1, CAST(? AS INTEGER)) = ?)', ['docs', 5, 'docs|'])
    """
    alternatives, args = [], []
    for site in site_watches:
        alternatives.append(f"{column} = {mark} OR substr({column}, 1, CAST({mark} AS INTEGER)) = {mark}")
        args += [site, len(site) + 1, f"{site}|"]
    return f"({' OR '.join(alternatives)})", args


def discard_where(destination: str | None, spider: str | None, before: str | None, mark: str,
                  changes: str = "changes") -> tuple[str, list[Any]]:
    """The WHERE clause (without ``WHERE``) over ``notifications n`` selecting the pending
    deliveries ``changewatch notify --discard`` ends, and its arguments; *mark* is the driver's
    placeholder, *changes* the change log's (qualified) table name.

    >>> discard_where(None, "shop", None, "%s")
    ('n.sent_at IS NULL AND n.discarded_at IS NULL AND n.spider = %s', ['shop'])
    """
    clauses, args = ["n.sent_at IS NULL", "n.discarded_at IS NULL"], []
    if destination is not None:
        clauses.append(f"(n.destination = {mark} OR n.shown = {mark})")
        args += [destination, destination]
    if spider is not None:
        clauses.append(f"n.spider = {mark}")
        args.append(spider)
    if before is not None:
        clauses.append(f"n.change_id IN (SELECT id FROM {changes} WHERE observed_at < {mark})")
        args.append(before)
    return " AND ".join(clauses), args


def entry(row: Any) -> LogEntry:
    """A :class:`LogEntry` from a row of :data:`ENTRY_COLUMNS`."""
    id_, spider, key, kind, observed_at, record, delivered_at = tuple(row)
    return LogEntry(id_, spider, key, kind, observed_at, json.loads(record), delivered_at)


def paged(fetch: Callable[[int, int], list[LogEntry]], after_id: int, batch_size: int) -> Iterator[LogEntry]:
    """Every entry ``fetch(after_id, limit)`` gives, a batch at a time, each batch starting after
    the last id of the one before (keyset paging: no OFFSET, no cursor held between batches)."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be 1 or more, not {batch_size}")
    while True:
        batch = fetch(after_id, batch_size)
        yield from batch
        if len(batch) < batch_size:
            return
        after_id = batch[-1].id


#: the order :meth:`~.base.TransferableStore.export_rows` reads each table in (its primary key)
EXPORT_ORDER = {"observations": ("spider", "key"), "validators": ("spider", "url", "key"), "changes": ("id",),
                "health_history": ("spider", "site", "day", "kind"),
                "health_conditions": ("spider", "site", "condition"),
                "notifications": ("change_id", "destination"), "summary_spend": ("day",),
                "evidence_bodies": ("spider", "digest"), "evidence": ("id",), "site_pages": ("spider", "site", "url"),
                "site_sets": ("spider", "site")}


def insert_sql(table: str, mark: str) -> str:
    """``INSERT INTO table (columns) VALUES (marks)`` for a table of :data:`TRANSFER_TABLES`
    (anything else is refused: the name goes into SQL)."""
    if table not in TRANSFER_TABLES:
        raise ValueError(f"not a table a store transfers: {table!r}")
    columns = TRANSFER_TABLES[table]
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join([mark] * len(columns))})"


def older_schema(subject: str, found: int, supported: int) -> OlderSchema:
    return OlderSchema(f"{subject} has store schema {found}, older than this changewatch's ({supported}); it was "
                       "left untouched: open it once for writing (a crawl does) to upgrade it in place")


def not_empty(subject: str, keys: int, validators: int, changes: int, *others: int) -> StoreNotEmpty:
    """*others*: the rows of the other tables (health history, evidence…), named only when there are some
    (every commit also counts in the health history)."""
    held = f", {sum(others)} other rows (health history, evidence, notifications)" if sum(others) else ""
    return StoreNotEmpty(f"{subject} is not empty ({keys} keys, {validators} validators, {changes} changes{held}): a "
                         "migration writes only into an empty store, never merges two; name a new one (another "
                         "file, or another ?schema=)")
