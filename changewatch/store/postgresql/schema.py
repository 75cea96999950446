"""The PostgreSQL store's schema, its forward migrations, and the checks made when it opens.

Every table lives in one PostgreSQL schema (``?schema=``, default ``changewatch``), so that one
database can hold several stores, and the tests a fresh one each. ``changewatch_meta`` names the
application and the schema version; :data:`MIGRATIONS` upgrade a store of an older released
schema one step at a time (a development build's is refused).
Creating and upgrading run under a transaction-level advisory lock on the schema's name: crawls
opening one store at once wait for each other, and each step checks again that it is due.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import NoSuchStore, StoreError
from ..health import HEALTH_TABLES
from ..semantics import APP_ID, FIRST_SCHEMA, check_schema_version

__all__ = ["MIGRATIONS", "existing_version", "prepare", "schema_sql", "schema_version"]

#: ``{s}`` is the quoted schema name. Large values are TOASTed: a row's small columns read without them.
_SCHEMA = """
CREATE TABLE {s}.changewatch_meta (name text PRIMARY KEY, value text NOT NULL);
CREATE TABLE {s}.observations (
    spider text NOT NULL,
    key text NOT NULL,
    url text NOT NULL,
    version bigint NOT NULL,
    snapshot bytea,
    counters text NOT NULL DEFAULT '{{}}',
    first_seen text,
    last_seen text,
    last_good text,
    last_changed text,
    last_error text,
    error_streak integer NOT NULL DEFAULT 0,
    schedule text,
    due_at text,
    due_interval double precision,
    listed_at text,
    PRIMARY KEY (spider, key)
);
CREATE TABLE {s}.changes (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    spider text NOT NULL,
    key text NOT NULL,
    kind text NOT NULL,
    observed_at text NOT NULL,
    record text NOT NULL,
    delivered_at text,
    lease_owner text,
    lease_expires timestamptz
);
CREATE INDEX changes_by_key ON {s}.changes (spider, key, id);
CREATE INDEX changes_undelivered ON {s}.changes (spider, id) WHERE delivered_at IS NULL;
CREATE INDEX changes_by_time ON {s}.changes (spider, observed_at);
CREATE TABLE {s}.validators (
    spider text NOT NULL,
    url text NOT NULL,
    key text NOT NULL,
    etag text,
    last_modified text,
    size bigint NOT NULL DEFAULT 0,
    full_at text,
    runs integer NOT NULL DEFAULT 0,
    spec text,
    render text,
    PRIMARY KEY (spider, url, key)
);
CREATE INDEX validators_by_key ON {s}.validators (spider, key);
CREATE TABLE {s}.notifications (
    change_id bigint NOT NULL,
    destination text NOT NULL,
    spider text NOT NULL,
    shown text NOT NULL,
    sent_at text,
    attempts integer NOT NULL DEFAULT 0,
    last_error text,
    claim_owner text,
    claim_expires timestamptz,
    PRIMARY KEY (change_id, destination)
);
CREATE INDEX notifications_pending ON {s}.notifications (destination, change_id) WHERE sent_at IS NULL;
CREATE TABLE {s}.summary_spend (day text PRIMARY KEY, cost double precision NOT NULL DEFAULT 0,
                                calls integer NOT NULL DEFAULT 0);
CREATE TABLE {s}.evidence_bodies (
    spider text NOT NULL,
    digest text NOT NULL,
    compression text NOT NULL,
    size bigint NOT NULL,
    stored_at text NOT NULL,
    body bytea NOT NULL,
    PRIMARY KEY (spider, digest)
);
CREATE TABLE {s}.evidence (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    spider text NOT NULL,
    key text NOT NULL,
    change_id bigint,
    observed_at text NOT NULL,
    url text NOT NULL,
    status integer NOT NULL,
    headers text NOT NULL,
    digest text NOT NULL,
    superseded integer NOT NULL DEFAULT 0
);
CREATE INDEX evidence_by_key ON {s}.evidence (spider, key, id);
CREATE INDEX evidence_by_change ON {s}.evidence (change_id) WHERE change_id IS NOT NULL;
CREATE INDEX evidence_by_digest ON {s}.evidence (spider, digest);
CREATE INDEX evidence_superseded ON {s}.evidence (spider, observed_at) WHERE superseded = 1;
""" + HEALTH_TABLES.replace("{s}", "{s}.").replace("{without_rowid}", "")

#: ``MIGRATIONS[n]`` upgrades a store at schema ``FIRST_SCHEMA + n`` to the next: SQL (``{s}``: the
#: quoted schema name) or a function of a cursor and the quoted schema name. A new store is created
#: at FIRST_SCHEMA and brought up by the same steps, so a schema change is one step appended here.
#: 100 → 101: a key's last observation of its page (``last_observed``: a 304 or an unchanged page
#: counts, an error does not) and since when its snapshot's content has been seen
#: (``content_since``), apart from ``last_good``, which any rewrite of the snapshot moves (noise,
#: what was learned). A key already stored gets the best its columns tell: its last fetch when
#: that was no error (a noisy page's is not one), else its last snapshot's; the time of its last
#: change, else its first fetch.
MIGRATIONS: list[str | Callable[[Any, str], None]] = [
    "ALTER TABLE {s}.observations ADD COLUMN last_observed text, ADD COLUMN content_since text; "
    "UPDATE {s}.observations SET "
    "last_observed = CASE WHEN last_error IS NULL OR left(last_error, 6) = 'noisy:' THEN last_seen "
    "ELSE last_good END, "
    "content_since = CASE WHEN last_good IS NOT NULL THEN coalesce(last_changed, first_seen) END",
    # 101 → 102: a notification can be discarded (changewatch notify --discard): recorded, no longer pending
    "ALTER TABLE {s}.notifications ADD COLUMN discarded_at text; DROP INDEX {s}.notifications_pending; "
    "CREATE INDEX notifications_pending ON {s}.notifications (destination, change_id) "
    "WHERE sent_at IS NULL AND discarded_at IS NULL",
    # 102 → 103: a link-mode site page's links, kept with its validators: a 304 still leads to them
    "ALTER TABLE {s}.validators ADD COLUMN links text",
    # 103 → 104: a site watch's page set, one row a page (the site watch's key, the page's canonical
    # URL), written in the transaction of the observation that reports it; read in code point order
    "CREATE TABLE {s}.site_pages (spider text NOT NULL, site text NOT NULL, url text NOT NULL, "
    "PRIMARY KEY (spider, site, url)); "
    'CREATE INDEX site_pages_in_order ON {s}.site_pages (spider, site, url COLLATE "C"); '
    "CREATE TABLE {s}.site_sets (spider text NOT NULL, site text NOT NULL, spec text NOT NULL, "
    "PRIMARY KEY (spider, site))",
]


def schema_version() -> int:
    """The schema this code creates and writes."""
    return FIRST_SCHEMA + len(MIGRATIONS)


def schema_sql(quoted: str) -> list[str]:
    """The statements that create schema :data:`FIRST_SCHEMA` in the schema *quoted*."""
    return [s for s in _SCHEMA.format(s=quoted).split(";") if s.strip()]


def prepare(conn: Any, name: str, quoted: str, where: str) -> int:
    """Create the store in schema *name* (created too when missing), or upgrade it, in one
    transaction on *conn* (psycopg, not in autocommit); its schema version. Refuses, leaving it
    untouched, a schema that holds other tables, that is not ours, of a newer version or of a
    development build.
    *where* names the store in messages."""
    with conn.transaction(), conn.cursor() as cur:
        cur.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"changewatch store {name}",))
        cur.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (name,))
        if cur.fetchone() is None:
            cur.execute(f"CREATE SCHEMA {quoted}")
        cur.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = %s", (name,))
        tables = {row[0] for row in cur.fetchall()}
        if not tables:
            for statement in schema_sql(quoted):
                cur.execute(statement)
            cur.execute(f"INSERT INTO {quoted}.changewatch_meta VALUES ('app', %s), ('schema_version', %s)",
                        (APP_ID, str(FIRST_SCHEMA)))
            tables = {"changewatch_meta"}
        if "changewatch_meta" not in tables:
            raise StoreError(f"{where}: schema {name!r} holds tables of another application "
                             f"({', '.join(sorted(tables)[:5])}); it was left untouched: choose another "
                             "with ?schema=")
        cur.execute(f"SELECT name, value FROM {quoted}.changewatch_meta")
        meta = dict(cur.fetchall())
        version = _version(meta, name, where)
        while version < schema_version():
            step = MIGRATIONS[version - FIRST_SCHEMA]
            if callable(step):
                step(cur, quoted)
            else:
                for statement in (s for s in step.format(s=quoted).split(";") if s.strip()):
                    cur.execute(statement)
            version += 1
            cur.execute(f"UPDATE {quoted}.changewatch_meta SET value = %s WHERE name = 'schema_version'",
                        (str(version),))
        return version


def _version(meta: dict[str, str], name: str, where: str) -> int:
    return check_schema_version(meta, f"{where}: schema {name!r}", schema_version())


def existing_version(conn: Any, name: str, quoted: str, where: str) -> int:
    """The schema version of the store in schema *name*, read without creating or changing
    anything: NoSuchStore when the schema does not exist or holds no table, StoreError for one
    that is not ours, of a newer version or of a development build."""
    with conn.transaction(), conn.cursor() as cur:
        cur.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = %s", (name,))
        tables = {row[0] for row in cur.fetchall()}
        if not tables:
            raise NoSuchStore(f"no such store: {where} does not exist (nothing was created)")
        if "changewatch_meta" not in tables:
            raise StoreError(f"{where}: schema {name!r} holds tables of another application "
                             f"({', '.join(sorted(tables)[:5])}); it was left untouched")
        cur.execute(f"SELECT name, value FROM {quoted}.changewatch_meta")
        return _version(dict(cur.fetchall()), name, where)
