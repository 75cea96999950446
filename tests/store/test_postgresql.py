"""What only the PostgreSQL store does: its URI and options, its schema (namespacing, versions,
migrations, what it refuses), and what an unreachable server says. The contract it shares with
every backend is in test_contract*.py and test_concurrency.py."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from changewatch.core.comparisons import Kind
from changewatch.store import StoreError, store_from_uri
from changewatch.store import postgresql_schema as schema
from changewatch.store.health import HistoryQuery
from changewatch.store.postgresql import PostgreSQLStore

from ._support import T0, T1, encoded, outcome
from .conftest import drop_postgresql_schema, postgresql_schema_uri


def _pg(uri: str, options: dict[str, object] | None = None) -> PostgreSQLStore:
    store = store_from_uri(uri, options=options)
    assert isinstance(store, PostgreSQLStore)
    return store


def test_uri_and_options() -> None:
    store = _pg("postgresql://me:s3cret@db.example:6543/watch")
    assert (store.uri, store.schema, store.pool_size, store.timeout) == (
        "postgresql://me:s3cret@db.example:6543/watch", "changewatch", 1, 30.0)
    assert not store.fast_commits and "s3cret" not in repr(store)
    store = _pg("postgres://db.example/watch?schema=crawl_a&pool_size=3&timeout=5&sslmode=require",
                {"timeout": 9, "synchronous": "FULL"})  # SQLite's options are ignored
    assert (store.schema, store.pool_size, store.timeout, store.connect) == ("crawl_a", 3, 5.0,
                                                                             {"sslmode": "require"})
    assert _pg("postgresql://db.example/watch", {"timeout": 9}).timeout == 9.0


@pytest.mark.parametrize(("uri", "named"), [
    ("postgresql://", "bad PostgreSQL store URI"),
    ("postgresql://me:s3cret@h/d?schema=Crawl", r"schema='Crawl' \(from the URI\) is not accepted: expected a "
                                               "lower-case PostgreSQL name"),
    ("postgresql://me:s3cret@h/d?schema=pg_x", r"schema='pg_x'"),
    ("postgresql://me:s3cret@h/d?schema=a;drop", r"schema='a;drop'"),
    ("postgresql://me:s3cret@h/d?pool_size=0", r"pool_size='0' \(from the URI\) is not accepted"),
    ("postgresql://me:s3cret@h/d?bogus=1", r"unknown option bogus='1'; accepted: schema"),
])
def test_a_bad_uri_is_named_without_its_password(uri: str, named: str) -> None:
    with pytest.raises(StoreError, match=named) as caught:
        store_from_uri(uri)
    assert "s3cret" not in str(caught.value)


def test_an_unreachable_server_is_a_clear_store_error() -> None:
    pytest.importorskip("psycopg")
    store = store_from_uri("postgresql://me:s3cret@127.0.0.1:1/watch?timeout=2")
    with pytest.raises(StoreError, match=r"PostgreSQL store postgresql://me:\*\*\*@127.0.0.1:1/watch \(schema "
                                         r"changewatch\): cannot connect.*is the server running") as caught:
        store.open()
    assert "s3cret" not in str(caught.value)
    with pytest.raises(StoreError, match="is not open"):
        store.read("spider", "k")


@pytest.fixture
def fresh() -> Iterator[tuple[str, str]]:
    name, uri = postgresql_schema_uri()
    yield name, uri
    drop_postgresql_schema(name)


def _sql(store: PostgreSQLStore, statement: str) -> None:
    with store._cursor("test") as cur:
        cur.execute(statement)


def test_schemas_are_separate_stores(fresh: tuple[str, str]) -> None:
    name, uri = fresh
    a = _pg(uri)
    b = _pg(uri.replace(f"schema={name}", f"schema={name}_b"))
    try:
        a.open()
        b.open()
        a.commit("spider", "k", None, outcome(Kind.BASELINE, encoded()))
        assert b.read("spider", "k") is None and b.keys("spider") == []
    finally:
        a.close()
        b.close()
        drop_postgresql_schema(f"{name}_b")


def test_a_newer_schema_is_refused_and_left_untouched(fresh: tuple[str, str]) -> None:
    _, uri = fresh
    store = _pg(uri)
    store.open()
    store.commit("spider", "k", None, outcome(Kind.BASELINE, encoded()))
    _sql(store, f"UPDATE {store._quoted}.changewatch_meta SET value = '99' WHERE name = 'schema_version'")
    store.close()
    with pytest.raises(StoreError, match=rf"has store schema 99, newer than this changewatch understands "
                                         rf"\({schema.SCHEMA_VERSION}\): upgrade changewatch"):
        _pg(uri).open()
    import psycopg

    from .conftest import POSTGRESQL
    with psycopg.connect(POSTGRESQL, autocommit=True) as conn:  # left as it was
        assert conn.execute(f"SELECT value FROM {store._quoted}.changewatch_meta WHERE name = 'schema_version'"
                            ).fetchone() == ("99",)
        assert conn.execute(f"SELECT count(*) FROM {store._quoted}.observations").fetchone() == (1,)


def test_a_schema_of_another_application_is_refused(fresh: tuple[str, str]) -> None:
    name, uri = fresh
    import psycopg

    from .conftest import POSTGRESQL
    with psycopg.connect(POSTGRESQL, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{name}"')
        conn.execute(f'CREATE TABLE "{name}".invoices (id int)')
    with pytest.raises(StoreError, match=rf"schema '{name}' holds tables of another application \(invoices\)"):
        _pg(uri).open()


def test_forward_migrations_run_in_order_when_opened(fresh: tuple[str, str], monkeypatch: pytest.MonkeyPatch
                                                     ) -> None:
    _, uri = fresh
    store = _pg(uri)
    store.open()
    store.commit("spider", "k", None, outcome(Kind.BASELINE, encoded()))
    store.close()

    def backfill(cur: object, quoted: str) -> None:
        cur.execute(f"UPDATE {quoted}.observations SET note = 'v3'")  # type: ignore[attr-defined]

    shipped = schema.SCHEMA_VERSION
    monkeypatch.setattr(schema, "MIGRATIONS", [*schema.MIGRATIONS, "ALTER TABLE {s}.observations ADD COLUMN note text",
                                               backfill])
    monkeypatch.setattr(schema, "SCHEMA_VERSION", shipped + 2)
    upgraded = _pg(uri)
    upgraded.open()
    try:
        with upgraded._cursor("test") as cur:
            cur.execute(f"SELECT value FROM {upgraded._quoted}.changewatch_meta WHERE name = 'schema_version'")
            assert cur.fetchone() == (str(shipped + 2),)
            cur.execute(f"SELECT note FROM {upgraded._quoted}.observations")
            assert cur.fetchall() == [("v3",)]
        assert upgraded.commit("spider", "k", 1, outcome(Kind.NONE, at=T1)).version == 2
    finally:
        upgraded.close()


def test_crawls_opening_a_new_store_at_once_create_it_once(fresh: tuple[str, str]) -> None:
    _, uri = fresh
    stores = [_pg(uri) for _ in range(4)]
    barrier = threading.Barrier(len(stores))
    errors: list[BaseException] = []

    def open_(store: PostgreSQLStore) -> None:
        barrier.wait()
        try:
            store.open()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=open_, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        assert errors == []
        stores[0].commit("spider", "k", None, outcome(Kind.BASELINE, encoded(), at=T0))
        assert stores[3].read("spider", "k") is not None
    finally:
        for store in stores:
            store.close()


def test_the_clock_is_the_servers(fresh: tuple[str, str]) -> None:
    _, uri = fresh
    store = _pg(uri)
    store.open()
    try:
        with store._cursor("test") as cur:
            cur.execute("SELECT now()")
            server = cur.fetchone()[0]
        assert abs((store.now() - server).total_seconds()) < 5 and store.now().utcoffset() is not None
    finally:
        store.close()


def _store_at(uri: str, version: int, *rows: str) -> None:
    """A new store at schema *version*, as that version of changewatch created it (a store is
    created at schema 1 and brought up by the same steps that upgrade one), holding *rows* (SQL,
    ``{s}`` the quoted schema)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(schema, "SCHEMA_VERSION", version)
        store = _pg(uri)
        store.open()
        for row in rows:
            _sql(store, row.format(s=store._quoted))
        store.close()


_KEY = ("INSERT INTO {s}.observations (spider, key, url, version, last_seen) "
        "VALUES ('spider', 'k', 'https://s.example/k', 1, '2024-01-01T00:00:00Z')")


def _version(store: PostgreSQLStore) -> str:
    with store._cursor("test") as cur:
        cur.execute(f"SELECT value FROM {store._quoted}.changewatch_meta WHERE name = 'schema_version'")
        return str(cur.fetchone()[0])


def test_a_store_of_schema_1_gains_an_empty_health_history(fresh: tuple[str, str]) -> None:
    _, uri = fresh
    _store_at(uri, 1, _KEY)
    upgraded = _pg(uri)
    upgraded.open()
    try:
        assert _version(upgraded) == str(schema.SCHEMA_VERSION)
        assert list(upgraded.history(HistoryQuery())) == []
        upgraded.commit("spider", "k", 1, outcome(Kind.NONE, at=T1))
        assert [(r.day, r.kind) for r in upgraded.history(HistoryQuery())] == [(T1[:10], "none")]
        assert upgraded.conditions("spider") == []
    finally:
        upgraded.close()


def test_a_schema_2_store_gains_the_dependency_sets_of_rendered_pages(fresh: tuple[str, str]) -> None:
    """Migration 2 → 3 (issue 13): the validators keep what they had and gain an empty ``render``."""
    _, uri = fresh
    _store_at(uri, 2, "INSERT INTO {s}.validators (spider, url, key, etag) VALUES ('spider', 'u', 'k', 'e')")
    upgraded = _pg(uri)
    upgraded.open()
    try:
        [v] = upgraded.validators("spider", "u")
        assert (v.key, v.etag, v.render) == ("k", "e", None)
    finally:
        upgraded.close()


def test_a_schema_3_store_gains_notifications_and_keeps_its_changes(fresh: tuple[str, str]) -> None:
    """3 → 4 (issue 16): the notification and spend tables; changes logged before have none pending."""
    _, uri = fresh
    _store_at(uri, 3, _KEY, "INSERT INTO {s}.changes (spider, key, kind, observed_at, record) VALUES "
                            "('spider', 'k', 'field', '2024-01-01T00:00:00Z', '{{\"kind\": \"field\"}}')")
    upgraded = _pg(uri)
    upgraded.open()
    try:
        assert [c.record for c in upgraded.changes("spider")] == [{"kind": "field"}]
        assert upgraded.notification_states() == [] and upgraded.spend("2024-01-01") == (0.0, 0)
        assert _version(upgraded) == str(schema.SCHEMA_VERSION)
    finally:
        upgraded.close()
