"""The PostgreSQL store's change-log queries and whole-store transfer (base.ChangeLogStore,
base.TransferableStore): what ``changewatch changes`` and ``changewatch migrate`` use, outside a
crawl. A mixin of :class:`changewatch.store.postgresql.PostgreSQLStore`, kept apart so that the
crawl's path (opening, retrying, committing) reads on its own."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from ..changelog import ENTRY_COLUMNS, EXPORT_ORDER, entry, not_empty, older_schema, paged, query_where
from ..errors import StoreError
from ..records import TRANSFER_TABLES, ChangeQuery, LogEntry, StoreCounts, TransferBatch
from .schema import existing_version, schema_version

__all__ = ["PostgreSQLTransfer"]


class PostgreSQLTransfer:
    """Reading the change log in the database, and moving a whole store in or out."""

    if TYPE_CHECKING:  # provided by PostgreSQLStore
        uri: str
        schema: str
        _quoted: str
        _opened: bool
        _pool: Any

        @property
        def _where(self) -> str: ...

        def open(self) -> None: ...

        def _driver(self) -> Any: ...

        def _kwargs(self) -> dict[str, Any]: ...

        def _error(self, doing: str, exc: BaseException) -> StoreError: ...

        def _cursor(self, doing: str) -> AbstractContextManager[Any]: ...

    def open_existing(self, *, upgrade: bool = False) -> None:
        if self._opened:
            return
        psycopg = self._driver()
        try:
            with psycopg.connect(self.uri, **self._kwargs()) as conn:
                found = existing_version(conn, self.schema, self._quoted, self._where)
        except psycopg.Error as exc:
            raise self._error("connect and read the store's schema version", exc) from exc
        if found < schema_version() and not upgrade:
            raise older_schema(self._where, found, schema_version())
        self.open()

    def query_changes(self, query: ChangeQuery, *, after_id: int = 0, batch_size: int = 1000) -> Iterator[LogEntry]:
        def fetch(after: int, limit: int) -> list[LogEntry]:
            where, args = query_where(query, after, "%s")
            with self._cursor("read the change log") as cur:
                cur.execute(f"SELECT {ENTRY_COLUMNS} FROM {self._quoted}.changes WHERE {where} ORDER BY id LIMIT %s",
                            (*args, limit))
                return [entry(r) for r in cur.fetchall()]

        return paged(fetch, after_id, batch_size)

    def export_rows(self, batch_size: int = 1000) -> Iterator[TransferBatch]:
        if self._pool is None:
            raise StoreError(f"{self._where} is not open")
        import psycopg
        from psycopg_pool import PoolTimeout

        try:
            with self._pool.connection() as conn, conn.transaction():
                conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")  # one snapshot
                for table, columns in TRANSFER_TABLES.items():
                    order = ", ".join(c if c in ("id", "change_id") else f'{c} COLLATE "C"'  # text in byte order
                                      for c in EXPORT_ORDER[table])
                    with conn.cursor(name=f"changewatch_export_{table}") as cur:  # server-side: memory stays flat
                        cur.execute(f"SELECT {', '.join(columns)} FROM {self._quoted}.{table} ORDER BY {order}")
                        while rows := cur.fetchmany(batch_size):
                            yield table, [tuple(bytes(v) if isinstance(v, memoryview) else v for v in row)
                                          for row in rows]
        except (psycopg.Error, PoolTimeout) as exc:
            raise self._error("read it for a migration", exc) from exc

    def import_rows(self, batches: Iterable[TransferBatch]) -> None:
        tables = [f"{self._quoted}.{table}" for table in TRANSFER_TABLES]
        with self._cursor("import a migrated store") as cur:
            # crawls that write to it meanwhile wait (then fail at the lock timeout), none slips in first
            cur.execute(f"LOCK TABLE {', '.join(tables)} IN SHARE ROW EXCLUSIVE MODE")
            held = []
            for table in tables:
                cur.execute(f"SELECT count(*) FROM {table}")
                held.append(cur.fetchone()[0])
            if any(held):
                raise not_empty(self._where, *held[:3])
            for table, rows in batches:
                if table not in TRANSFER_TABLES:
                    raise ValueError(f"not a table a store transfers: {table!r}")
                # COPY writes the given ids into the identity column, as OVERRIDING SYSTEM VALUE would
                with cur.copy(f"COPY {self._quoted}.{table} ({', '.join(TRANSFER_TABLES[table])}) FROM STDIN") as copy:
                    for row in rows:
                        copy.write_row(row)
            # the changes (and kept versions) logged next get higher ids than every one imported
            for table in (t for t, columns in TRANSFER_TABLES.items() if "id" in columns):
                name = f"{self._quoted}.{table}"
                cur.execute("SELECT setval(seq, GREATEST(top, coalesce(pg_sequence_last_value(seq::regclass), 1))) "
                            f"FROM (SELECT pg_get_serial_sequence(%s, 'id') AS seq, max(id) AS top FROM {name}) AS s "
                            "WHERE top IS NOT NULL", (name,))

    def counts(self) -> StoreCounts:
        with self._cursor("count what it holds") as cur:
            cur.execute(f"SELECT spider, count(*) FROM {self._quoted}.observations GROUP BY spider "
                        'ORDER BY spider COLLATE "C"')
            keys = dict(cur.fetchall())
            cur.execute(f"SELECT count(*) FROM {self._quoted}.validators")
            validators = cur.fetchone()[0]
            cur.execute(f"SELECT count(*), count(*) - count(delivered_at) FROM {self._quoted}.changes")
            changes, undelivered = cur.fetchone()
            cur.execute(f"SELECT (SELECT count(*) FROM {self._quoted}.health_history) + "
                        f"(SELECT count(*) FROM {self._quoted}.health_conditions)")
            health = cur.fetchone()[0]
            cur.execute(f"SELECT count(*) FROM {self._quoted}.evidence")
            evidence = cur.fetchone()[0]
        return StoreCounts(keys, validators, changes, undelivered, health, evidence)
