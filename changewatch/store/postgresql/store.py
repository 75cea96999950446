"""PostgreSQL store: several crawls on several machines sharing one database.

``postgresql://user:password@host:5432/database?schema=changewatch&pool_size=1&timeout=30``
(``postgres://`` too). psycopg 3 with a :class:`psycopg_pool.ConnectionPool`; install with
``pip install 'scrapy-changewatch[postgresql]'``. Each commit is one short READ COMMITTED transaction
whose correctness comes from the version check, as SQLite's: ``UPDATE … WHERE version = %s``
takes the key's row lock (a concurrent commit of that key waits for it, then matches no row and
conflicts), and an ``INSERT … ON CONFLICT DO NOTHING`` of a new key that inserts nothing
conflicts. Nothing else is locked. The store's clock is the database server's (``now()``), shared
by every machine. Commits cross the network: the crawl runs them on its store thread
(``fast_commits`` is False).
"""

from __future__ import annotations

import json
import logging
import math
import re
import threading
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, TypeVar

from ...core.validators import HttpValidators
from ..errors import StoreError, VersionConflict
from ..options import Option, redact, resolve_options, seconds, split_query
from ..protocol import StoreOptions
from ..records import Committed, Lease, LoggedChange, Outcome, StoredState
from ..semantics import check_committable, clamp, logged_record, next_state, record_json, report_clamp
from .health import PostgreSQLHealth
from .retry import FIRST_DELAY, Attempt, DatabaseOutage
from .routing import PostgreSQLRouting, write_notifications
from .schema import prepare
from .transfer import PostgreSQLTransfer
from .upkeep import PostgreSQLUpkeep

__all__ = ["OPTIONS", "PostgreSQLStore"]

logger = logging.getLogger(__name__)

T = TypeVar("T")

_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")


def _schema_name(value: Any) -> str:
    text = str(value)
    if not _SCHEMA_NAME.fullmatch(text) or text.startswith("pg_"):
        raise ValueError(text)
    return text


def _pool_size(value: Any) -> int:
    number = int(str(value))
    if not 1 <= number <= 100:
        raise ValueError(value)
    return number


def _text(value: Any) -> str:
    return str(value)


#: what a ``postgresql://`` URI's query may set: the store's own options, then libpq parameters
#: passed to every connection as they are
OPTIONS: dict[str, Option] = {
    "schema": Option(_schema_name, "a lower-case PostgreSQL name ([a-z_][a-z0-9_]*, not pg_*)", "changewatch"),
    "pool_size": Option(_pool_size, "a number of connections from 1 to 100", 1),
    # how long to wait for a connection, for another writer's row lock, and to connect
    "timeout": seconds(default=30.0),
    # how long one outage (lost connections, a server restarting) may last before a StoreError
    "retry_time": seconds(default=60.0),
    **{name: Option(_text, "a libpq connection parameter", None)
       for name in ("password", "sslmode", "sslrootcert", "sslcert", "sslkey", "application_name", "host", "passfile",
                    "target_session_attrs")},
}
_OWN = ("schema", "pool_size", "timeout", "retry_time")


class PostgreSQLStore(PostgreSQLHealth, PostgreSQLTransfer, PostgreSQLRouting, PostgreSQLUpkeep):
    """Keyed store in one schema of a PostgreSQL database. A schema holding other tables, or a
    store of a newer schema version, is refused with a :class:`StoreError` and left untouched."""

    def __init__(self, uri: str, *, schema: str = "changewatch", pool_size: int = 1, timeout: float = 30.0,
                 connect: dict[str, str] | None = None, retry_time: float = 60.0):
        self.uri = uri  # without the query: a libpq connection URI
        self.name = redact(uri)
        self.schema = _schema_name(schema)
        self.pool_size = pool_size
        self.timeout = timeout
        self.connect = dict(connect or {})
        self._quoted = f'"{self.schema}"'
        self._pool: Any = None
        self._clamp_reported = False
        self._opened = False
        self.retry_time = retry_time
        self._outage = DatabaseOutage(retry_time, self._where)

    @classmethod
    def from_uri(cls, uri: str, options: StoreOptions | None = None) -> PostgreSQLStore:
        """``postgresql://[user[:password]@][host][:port][/database]`` with options in the query
        (``?schema=s&pool_size=2&timeout=10&sslmode=require``) overriding *options*."""
        base, query = split_query(uri)
        scheme, _, rest = base.partition("://")
        if scheme.lower() not in ("postgresql", "postgres") or not rest:
            raise StoreError(f"bad PostgreSQL store URI {redact(uri)!r}: expected "
                             "postgresql://user@host:port/database")
        resolved = resolve_options(uri, OPTIONS, options or {}, query)
        connect = {name: value for name, value in resolved.items() if name not in _OWN and value is not None}
        return cls(base, schema=resolved["schema"], pool_size=resolved["pool_size"], timeout=resolved["timeout"],
                   connect=connect, retry_time=resolved["retry_time"])

    @property
    def fast_commits(self) -> bool:
        """Every commit is a network round trip: the crawl runs them on its store thread."""
        return False

    def __repr__(self) -> str:
        return f"PostgreSQLStore({self.name!r}, schema={self.schema!r})"

    @property
    def _where(self) -> str:
        return f"PostgreSQL store {self.name} (schema {self.schema})"

    # -- opening ---------------------------------------------------------------------------------

    def _kwargs(self) -> dict[str, Any]:
        lock_ms = max(1, round(self.timeout * 1000))  # 0 would mean: wait for ever
        return {**self.connect, "connect_timeout": max(2, math.ceil(self.timeout)),
                "options": f"-c lock_timeout={lock_ms} -c TimeZone=UTC", "autocommit": True}

    def open(self) -> None:
        if self._opened:
            return
        psycopg = self._driver()
        # Autocommit: every unit of work is a conn.transaction() block, committed as it ends.
        # One connection first, to say why the server cannot be reached (a pool only times out)
        # and to create or upgrade the schema.
        try:
            with psycopg.connect(self.uri, **self._kwargs()) as conn:
                prepare(conn, self.schema, self._quoted, self._where)
        except psycopg.Error as exc:
            raise self._error("connect and prepare the schema", exc) from exc
        pool = self._new_pool()
        try:
            pool.open(wait=True, timeout=max(self.timeout, 1.0))
        except Exception as exc:
            pool.close()
            raise StoreError(f"{self._where}: cannot open a connection pool: {exc}") from exc
        self._pool = pool
        self._opened = True

    def _driver(self) -> Any:
        """The psycopg module, or a StoreError that says how to install it."""
        try:
            import psycopg
            import psycopg_pool  # noqa: F401  (installed with the driver, or not at all)
        except ImportError as exc:
            raise StoreError(f"{self._where}: the PostgreSQL driver is not installed ({exc}): "
                             "pip install 'scrapy-changewatch[postgresql]'") from exc
        return psycopg

    def _new_pool(self) -> Any:
        from psycopg_pool import ConnectionPool

        return ConnectionPool(self.uri, kwargs=self._kwargs(), min_size=1, max_size=self.pool_size, open=False,
                              timeout=self.timeout, name=f"changewatch-{self.schema}")

    def close(self) -> None:
        self._opened = False
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    @property
    def retries(self) -> int:
        """Transactions run again after a transient failure, since the store was built."""
        return self._outage.retries

    def _error(self, doing: str, exc: BaseException) -> StoreError:
        message = " ".join(str(exc).split()) or type(exc).__name__
        if self.uri in message:
            message = message.replace(self.uri, self.name)
        hint = ""
        if type(exc).__name__ == "LockNotAvailable":
            hint = "; raise the store's timeout (?timeout=SECONDS) if its writers are slow"
        elif type(exc).__name__ in ("OperationalError", "PoolTimeout") and "connect" in doing:
            hint = "; is the server running and the URI right?"
        return StoreError(f"{self._where}: cannot {doing}: {message}{hint}")

    @contextmanager
    def _cursor(self, doing: str) -> Iterator[Any]:
        """A cursor in one transaction, committed when the block ends and rolled back on any
        failure; a database failure becomes a StoreError that says what and why."""
        if self._pool is None:
            raise StoreError(f"{self._where} is not open")
        import psycopg
        from psycopg_pool import PoolTimeout

        try:
            with self._pool.connection() as conn, conn.transaction(), conn.cursor() as cur:
                yield cur
        except (psycopg.Error, PoolTimeout) as exc:
            raise self._error(doing, exc) from exc

    def _retrying(self, doing: str, work: Callable[[Any, Attempt], T], *, once: bool = False,
                  statement: bool = False) -> T:
        """``work(cursor, attempt)`` in one transaction, run again in a new one after a transient
        failure (a lost connection, a server restarting, a serialization failure) until the
        outage has lasted ``retry_time`` (changewatch.store.postgresql.retry). *once*: the work
        must not be done twice; it sets ``attempt.xid`` (``txid_current()``), and a failure
        after it finished (during COMMIT) is settled by asking the server whether that
        transaction committed. Any other failure, or one past the budget, is a StoreError.
        *statement*: the work is one statement, run in autocommit (its own transaction): no
        BEGIN and COMMIT round trips, a third of the time of a key's read on a local server."""
        if not self._opened:
            raise StoreError(f"{self._where} is not open")
        import psycopg
        from psycopg_pool import PoolTimeout

        if not self._outage.may_try():
            raise StoreError(f"{self._where}: cannot {doing}: the database has been unreachable for more than "
                             f"{self.retry_time:g} s")
        delay = FIRST_DELAY
        while True:
            attempt = Attempt()
            try:
                if self._outage.lost_connections or self._pool is None:
                    self._reconnect()
                with self._pool.connection() as conn, conn.cursor() as cur:
                    if statement:
                        attempt.result = work(cur, attempt)
                    else:
                        with conn.transaction():
                            attempt.result = work(cur, attempt)
                            attempt.finished = True  # only COMMIT is left
            except (psycopg.Error, PoolTimeout) as exc:
                if not self._outage.is_transient(exc):
                    raise self._error(doing, exc) from exc
                if self._outage.lost(doing, exc) is None:
                    budget = f" (the database was unreachable for {self.retry_time:g} s)" if self.retry_time else ""
                    raise self._error(doing + budget, exc) from exc
                if once and attempt.finished and attempt.xid is not None and self._committed(attempt, doing):
                    self._outage.over()
                    return attempt.result  # type: ignore[no-any-return]
                delay = self._outage.pause(delay)
                continue
            self._outage.over()
            return attempt.result  # type: ignore[no-any-return]

    def _reconnect(self) -> None:
        """After connections were lost: one new connection, made here and now, and a new pool
        once it is made. psycopg_pool alone would reconnect with its own backoff (1, 2, 4…
        64 s), which can stretch a 20-second outage to 30 and outlast the retry budget after
        the server came back; the old pool's attempts would fill the log meanwhile."""
        import psycopg

        if self._pool is not None:  # closed in the background: its workers may be mid-connect
            threading.Thread(target=self._pool.close, daemon=True, name="changewatch-pool-close").start()
            self._pool = None
        connect_timeout = max(2, math.ceil(min(self.timeout, max(self._outage.left, 0.0))))
        psycopg.connect(self.uri, **{**self._kwargs(), "connect_timeout": connect_timeout}).close()
        pool = self._new_pool()
        try:
            pool.open(wait=True, timeout=max(self.timeout, 1.0))
        except BaseException:
            pool.close(timeout=0)
            raise
        self._pool = pool
        self._outage.lost_connections = False

    def _committed(self, attempt: Attempt, doing: str) -> bool:
        """Whether the transaction of *attempt*, whose COMMIT was sent but never acknowledged,
        committed. A transaction still in progress is one whose COMMIT never reached the server
        (lost on the way, a partition): its backend would sit idle in it, holding the key's row
        lock, until TCP keepalive noticed (hours). It is ended here (``pg_terminate_backend``, which
        a role may do to its own backends), so it aborts and the work can run again. Bounded by
        ``retry_time`` from now, whatever the outage's own budget says."""
        xid, backend = attempt.xid, attempt.backend
        deadline = time.monotonic() + max(self.retry_time, self.timeout)

        def ask(cur: Any, _: Attempt) -> str | None:
            status: str | None = cur.execute("SELECT txid_status(%s)", (xid,)).fetchone()[0]
            if status == "in progress" and backend is not None:
                # only that backend, and only while it is still in that transaction (pids are reused)
                cur.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = %s "
                            "AND backend_xid IS NOT NULL AND backend_xid::text::bigint = %s",
                            (backend, xid % 2**32 if xid is not None else None))
            return status

        while True:
            status = self._retrying(f"learn whether the interrupted attempt to {doing} committed", ask,
                                    statement=True)
            if status != "in progress":  # None: too old to tell (it cannot be, seconds later)
                return bool(status == "committed")
            if time.monotonic() >= deadline:
                raise StoreError(f"{self._where}: cannot {doing}: the database did not say in time whether the "
                                 "interrupted transaction committed")
            time.sleep(FIRST_DELAY)

    def now(self) -> datetime:
        moment: datetime = self._retrying("read the server's clock",
                                          lambda cur, _: cur.execute("SELECT now()").fetchone()[0], statement=True)
        return moment.astimezone(UTC)

    # -- reading ---------------------------------------------------------------------------------

    _STATE = ("key, url, version, snapshot, counters, first_seen, last_seen, last_good, last_changed, last_error, "
              "error_streak, schedule, last_observed, content_since")
    _CHANGE = "id, spider, key, kind, observed_at, record, lease_owner"

    @staticmethod
    def _state(row: tuple[Any, ...] | None) -> StoredState | None:
        if row is None:
            return None
        (key, url, version, snapshot, counters, first, last, good, changed, error, streak, schedule, observed,
         since) = row
        return StoredState(key=key, url=url, version=version, snapshot=None if snapshot is None else bytes(snapshot),
                           counters=json.loads(counters), first_seen=first, last_seen=last, last_good=good,
                           last_changed=changed, last_error=error, error_streak=streak, schedule=schedule,
                           last_observed=observed, content_since=since)

    @staticmethod
    def _change(row: tuple[Any, ...]) -> LoggedChange:
        id_, spider, key, kind, observed_at, record, owner = row
        return LoggedChange(id_, spider, key, kind, observed_at, json.loads(record), owner)

    def _read(self, cur: Any, spider: str, key: str) -> StoredState | None:
        cur.execute(f"SELECT {self._STATE} FROM {self._quoted}.observations WHERE spider = %s AND key = %s",
                    (spider, key))
        return self._state(cur.fetchone())

    def read(self, spider: str, key: str) -> StoredState | None:
        return self._retrying(f"read key {key!r}", lambda cur, _: self._read(cur, spider, key), statement=True)

    def keys(self, spider: str) -> list[str]:
        def work(cur: Any, _: Attempt) -> list[str]:
            cur.execute(f"SELECT key FROM {self._quoted}.observations WHERE spider = %s ORDER BY key COLLATE \"C\"",
                        (spider,))
            return [r[0] for r in cur.fetchall()]
        return self._retrying("list keys", work, statement=True)

    def changes(self, spider: str | None = None, after_id: int = 0) -> Iterator[LoggedChange]:
        sql = f"SELECT {self._CHANGE} FROM {self._quoted}.changes WHERE id > %s"
        args: tuple[Any, ...] = (after_id,)
        if spider is not None:
            sql += " AND spider = %s"
            args = (after_id, spider)
        rows = self._retrying("read the change log", lambda cur, _: cur.execute(sql + " ORDER BY id", args).fetchall(),
                              statement=True)
        return iter([self._change(r) for r in rows])

    def undelivered(self, spider: str) -> list[LoggedChange]:
        rows = self._retrying("read undelivered changes", lambda cur, _: cur.execute(
            f"SELECT {self._CHANGE} FROM {self._quoted}.changes WHERE spider = %s AND delivered_at IS NULL ORDER BY id",
            (spider,)).fetchall(), statement=True)
        return [self._change(r) for r in rows]

    def validators(self, spider: str, url: str) -> list[HttpValidators]:
        rows = self._retrying("read validators", lambda cur, _: cur.execute(
            "SELECT url, key, etag, last_modified, size, full_at, runs, spec, render, links "
            f"FROM {self._quoted}.validators WHERE spider = %s AND url = %s "
            'ORDER BY key COLLATE "C"', (spider, url)).fetchall(), statement=True)
        return [HttpValidators(url=r[0], key=r[1], etag=r[2], last_modified=r[3], size=r[4], full_at=r[5],
                               runs=r[6], spec=r[7], render=r[8], links=r[9]) for r in rows]

    def replace_snapshot(self, spider: str, key: str, expected_version: int, snapshot: bytes) -> int:
        def work(cur: Any, _: Attempt) -> int:
            # one statement: atomic, and a retry after a lost acknowledgement conflicts, never doubles
            cur.execute(f"UPDATE {self._quoted}.observations SET snapshot = %s, version = version + 1 "
                        "WHERE spider = %s AND key = %s AND version = %s", (snapshot, spider, key, expected_version))
            return int(cur.rowcount)
        if self._retrying(f"replace the snapshot of key {key!r}", work, statement=True) != 1:
            raise VersionConflict(f"key {key!r} of spider {spider!r} is not at version {expected_version}")
        return expected_version + 1

    # -- committing an observation ---------------------------------------------------------------

    def commit(self, spider: str, key: str, expected_version: int | None, outcome: Outcome, *,
               lease: Lease | None = None, previous: StoredState | None = None) -> Committed:
        def work(cur: Any, attempt: Attempt) -> tuple[Committed, datetime]:
            # the transaction's time (the same now() as the lease's below), and its id: were the
            # COMMIT's acknowledgement lost, the retry asks whether it committed
            cur.execute("SELECT now(), txid_current(), pg_backend_pid()")
            moment, attempt.xid, attempt.backend = cur.fetchone()
            now: datetime = moment.astimezone(UTC)
            observed_at, clamped = clamp(outcome.observed_at, now)
            stored = previous
            if stored is None or stored.version != expected_version:
                # Not given (or not the version expected): read it. Given, the UPDATE below is
                # conditional on the version: it is what is stored, or the commit conflicts.
                stored = self._read(cur, spider, key)
            check_committable(stored, expected_version, observed_at, spider, key)
            version = self._write_state(cur, spider, key, expected_version, next_state(stored, outcome, observed_at),
                                        self._counted(spider, outcome, observed_at))
            self._write_validators(cur, spider, key, outcome, observed_at)
            if outcome.pages is not None:
                self._sql.write_pages(cur, spider, key, outcome.pages)
            change_id = None
            if (record := logged_record(outcome, observed_at, clamped)) is not None:
                cur.execute(f"INSERT INTO {self._quoted}.changes (spider, key, kind, observed_at, record, lease_owner, "
                            "lease_expires) VALUES (%s, %s, %s, %s, %s, %s, now() + make_interval(secs => %s)) "
                            "RETURNING id",
                            (spider, key, outcome.kind.value, observed_at, record_json(record),
                             lease.owner if lease else None, lease.seconds if lease else None))
                change_id = cur.fetchone()[0]
                write_notifications(cur, self._quoted, spider, change_id, outcome)
            if outcome.evidence is not None:
                self._write_evidence(cur, spider, key, change_id, observed_at, outcome.evidence, now)
            return Committed(version, change_id, observed_at, clamped), now

        committed, now = self._retrying(f"commit an observation of key {key!r}", work, once=True)
        if committed.clamped:
            report_clamp(logger, self._clamp_reported, spider, key, outcome.observed_at, now, committed.observed_at)
            self._clamp_reported = True
        return committed

    def _write_state(self, cur: Any, spider: str, key: str, expected: int | None, values: dict[str, Any],
                     counted: tuple[str, tuple[Any, ...]]) -> int:
        """Write the key's columns if it is still at *expected*; its new version. *counted*: the
        health-history upsert, run in the same statement (a data-modifying WITH: no round trip more)."""
        cte, cte_args = counted
        if expected is None:
            values.update(spider=spider, key=key, version=1)
            cur.execute(f"{cte} INSERT INTO {self._quoted}.observations ({', '.join(values)}) "
                        f"VALUES ({', '.join(['%s'] * len(values))}) ON CONFLICT (spider, key) DO NOTHING",
                        (*cte_args, *values.values()))
            if cur.rowcount != 1:  # another writer created the key first
                raise VersionConflict(f"key {key!r} of spider {spider!r} exists already")
            return 1
        sets = ", ".join(f"{column} = %s" for column in values)
        cur.execute(f"{cte} UPDATE {self._quoted}.observations SET {sets}, version = %s "
                    "WHERE spider = %s AND key = %s AND version = %s",
                    (*cte_args, *values.values(), expected + 1, spider, key, expected))
        if cur.rowcount != 1:
            raise VersionConflict(f"key {key!r} of spider {spider!r} moved past version {expected}")
        return expected + 1

    def _write_validators(self, cur: Any, spider: str, key: str, outcome: Outcome, observed_at: str) -> None:
        if outcome.not_modified:
            cur.execute(f"UPDATE {self._quoted}.validators SET runs = runs + 1 WHERE spider = %s AND url = %s "
                        "AND key = %s", (spider, outcome.url, key))
        v = outcome.http
        if v is None:
            return
        # A full response replaces whatever the key had, from any URL: the key may have moved.
        # A row without validators is kept too: it says the page had none (a full fetch next time).
        # One statement, one round trip: the key's rows of other URLs go, its row of this URL is
        # written in place (both see the same snapshot, and touch different rows).
        cur.execute(f"WITH moved AS (DELETE FROM {self._quoted}.validators WHERE spider = %s AND key = %s "
                    f"AND url <> %s) INSERT INTO {self._quoted}.validators (spider, url, key, etag, last_modified, "
                    "size, full_at, runs, spec, render, links) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
                    "ON CONFLICT (spider, url, key) DO UPDATE SET etag = excluded.etag, "
                    "last_modified = excluded.last_modified, size = excluded.size, full_at = excluded.full_at, "
                    "runs = excluded.runs, spec = excluded.spec, render = excluded.render, links = excluded.links",
                    (spider, key, v.url, spider, v.url, key, v.etag, v.last_modified, v.size,
                     v.full_at or observed_at, v.runs, v.spec, v.render, v.links))

    def forget_validators(self, spider: str, url: str, keep: Sequence[str]) -> None:
        self._retrying("forget validators", lambda cur, _: cur.execute(
            f"DELETE FROM {self._quoted}.validators WHERE spider = %s AND url = %s AND NOT (key = ANY(%s))",
            (spider, url, list(keep))))

    # -- delivery and leases ---------------------------------------------------------------------

    def lease_owners(self, spider: str) -> set[str]:
        rows = self._retrying("read lease owners", lambda cur, _: cur.execute(
            f"SELECT DISTINCT lease_owner FROM {self._quoted}.changes WHERE spider = %s "
            "AND delivered_at IS NULL AND lease_owner IS NOT NULL AND lease_expires > now()", (spider,)).fetchall(),
            statement=True)
        return {r[0] for r in rows}

    def claim_undelivered(self, spider: str, lease: Lease, *, dead_owners: Collection[str] = ()) -> list[LoggedChange]:
        # One UPDATE: a row another claim locked is checked again once that claim commits (READ
        # COMMITTED), so a row it took with a live lease is skipped, and only what this claim
        # took is returned. Taken twice, it would return nothing the second time: a claim whose
        # COMMIT was not acknowledged is settled by its transaction id.
        def work(cur: Any, attempt: Attempt) -> list[Any]:
            attempt.xid, attempt.backend = cur.execute("SELECT txid_current(), pg_backend_pid()").fetchone()
            cur.execute(f"UPDATE {self._quoted}.changes SET lease_owner = %s, "
                        "lease_expires = now() + make_interval(secs => %s) "
                        "WHERE spider = %s AND delivered_at IS NULL AND (lease_owner IS NULL OR lease_expires IS NULL "
                        f"OR lease_expires <= now() OR lease_owner = ANY(%s)) RETURNING {self._CHANGE}",
                        (lease.owner, lease.seconds, spider, sorted(set(dead_owners))))
            taken: list[Any] = cur.fetchall()
            return taken
        rows = self._retrying("claim undelivered changes", work, once=True)
        return sorted((self._change(r) for r in rows), key=lambda change: change.id)

    def renew_leases(self, spider: str, lease: Lease) -> int:
        count: int = self._retrying("renew leases", lambda cur, _: cur.execute(
            f"UPDATE {self._quoted}.changes SET lease_expires = now() + make_interval(secs => %s) "
            "WHERE spider = %s AND lease_owner = %s AND delivered_at IS NULL",
            (lease.seconds, spider, lease.owner)).rowcount)
        return count

    def release_leases(self, spider: str, owner: str, ids: Sequence[int] | None = None) -> None:
        sql = (f"UPDATE {self._quoted}.changes SET lease_owner = NULL, lease_expires = NULL WHERE spider = %s "
               "AND lease_owner = %s AND delivered_at IS NULL")
        if ids is None:
            self._retrying("release leases", lambda cur, _: cur.execute(sql, (spider, owner)))
        elif ids:
            self._retrying("release leases", lambda cur, _: cur.execute(sql + " AND id = ANY(%s)",
                                                                        (spider, owner, list(ids))))

    def mark_delivered(self, spider: str, ids: Sequence[int], at: str) -> None:
        if not ids:
            return
        # Idempotent (only rows not yet delivered): a retry after a lost acknowledgement is harmless.
        self._retrying("mark changes delivered", lambda cur, _: cur.execute(
            f"UPDATE {self._quoted}.changes SET delivered_at = %s WHERE spider = %s "
            "AND delivered_at IS NULL AND id = ANY(%s)", (at, spider, list(ids))))
