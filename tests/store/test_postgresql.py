"""What only the PostgreSQL store does: its URI and options, its schema (namespacing, versions,
migrations, what it refuses), and what an unreachable server says. The contract it shares with
every backend is in test_contract*.py and test_concurrency.py."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from changewatch.core.comparisons import Kind
from changewatch.store import StoreError, store_from_uri
from changewatch.store.postgresql import PostgreSQLStore, schema
from changewatch.store.semantics import FIRST_SCHEMA

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


@pytest.mark.slow  # the test PostgreSQL server
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


@pytest.mark.slow  # the test PostgreSQL server
def test_a_newer_schema_is_refused_and_left_untouched(fresh: tuple[str, str]) -> None:
    _, uri = fresh
    store = _pg(uri)
    store.open()
    store.commit("spider", "k", None, outcome(Kind.BASELINE, encoded()))
    _sql(store, f"UPDATE {store._quoted}.changewatch_meta SET value = '999' WHERE name = 'schema_version'")
    store.close()
    with pytest.raises(StoreError, match=rf"has store schema 999, newer than this changewatch understands "
                                         rf"\({schema.schema_version()}\): upgrade changewatch"):
        _pg(uri).open()
    import psycopg

    from .conftest import POSTGRESQL
    with psycopg.connect(POSTGRESQL, autocommit=True) as conn:  # left as it was
        assert conn.execute(f"SELECT value FROM {store._quoted}.changewatch_meta WHERE name = 'schema_version'"
                            ).fetchone() == ("999",)
        assert conn.execute(f"SELECT count(*) FROM {store._quoted}.observations").fetchone() == (1,)


@pytest.mark.slow  # the test PostgreSQL server
def test_a_schema_of_another_application_is_refused(fresh: tuple[str, str]) -> None:
    name, uri = fresh
    import psycopg

    from .conftest import POSTGRESQL
    with psycopg.connect(POSTGRESQL, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{name}"')
        conn.execute(f'CREATE TABLE "{name}".invoices (id int)')
    with pytest.raises(StoreError, match=rf"schema '{name}' holds tables of another application \(invoices\)"):
        _pg(uri).open()


@pytest.mark.slow  # the test PostgreSQL server
def test_the_next_schema_change_is_one_step_appended(fresh: tuple[str, str], monkeypatch: pytest.MonkeyPatch
                                                     ) -> None:
    _, uri = fresh
    store = _pg(uri)
    store.open()
    store.commit("spider", "k", None, outcome(Kind.BASELINE, encoded()))
    store.close()

    def backfill(cur: object, quoted: str) -> None:
        cur.execute(f"UPDATE {quoted}.observations SET note = 'v3'")  # type: ignore[attr-defined]

    shipped = schema.schema_version()
    assert shipped == FIRST_SCHEMA + len(schema.MIGRATIONS) and FIRST_SCHEMA > 5  # above every development build's
    monkeypatch.setattr(schema, "MIGRATIONS", [*schema.MIGRATIONS, "ALTER TABLE {s}.observations ADD COLUMN note text",
                                               backfill])
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


@pytest.mark.slow  # the test PostgreSQL server
def test_a_store_before_discards_keeps_its_pending_notifications_through_the_upgrade(
        fresh: tuple[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Schema 102 records discarded notifications: a store of 101 is upgraded with its pending
    notification still pending, and the partial index of pending ones covers the new column."""
    import dataclasses

    _, uri = fresh
    with monkeypatch.context() as first:
        first.setattr(schema, "MIGRATIONS", schema.MIGRATIONS[:1])
        store = _pg(uri)
        store.open()
        store.commit("spider", "k", None, dataclasses.replace(outcome(Kind.FIELD, encoded(), {"kind": "field"}),
                                                              notify=(("dest", "json://d.example/"),)))
        store.close()
    upgraded = _pg(uri)
    upgraded.open()
    try:
        with upgraded._cursor("test") as cur:
            cur.execute(f"SELECT value FROM {upgraded._quoted}.changewatch_meta WHERE name = 'schema_version'")
            assert cur.fetchone() == (str(schema.schema_version()),)
            cur.execute("SELECT indexdef FROM pg_indexes WHERE schemaname = %s AND indexname = %s",
                        (upgraded._quoted.strip('"'), "notifications_pending"))
            assert "discarded_at IS NULL" in cur.fetchone()[0]
        [state] = upgraded.notification_states()
        assert (state.destination, state.sent_at, state.discarded_at) == ("dest", None, None)
        assert upgraded.discard_notifications("json://d.example/", T1) == 1 and upgraded.notification_states() == []
    finally:
        upgraded.close()


@pytest.mark.slow  # the test PostgreSQL server
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


@pytest.mark.slow  # the test PostgreSQL server
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


#: keys of a store at the first released schema, before schema 101 kept the last observation and
#: the age of the content: (key, first_seen, last_seen, last_good, last_changed, last_error)
#: → (last_observed, content_since) after the upgrade, the best those columns tell
BEFORE_101 = [
    (("quiet", "T0", "T3", "T1", None, None), ("T3", "T0")),
    (("changed", "T0", "T3", "T2", "T2", None), ("T3", "T2")),
    (("failing", "T0", "T3", "T1", None, "timeout: no answer"), ("T1", "T0")),
    (("noisy", "T0", "T3", "T3", None, "noisy: every line varies"), ("T3", "T0")),
    (("never-seen", "T0", "T3", None, None, "dns: the host name x does not resolve"), (None, None)),
]
TIMES = {"T0": "2024-05-01T00:00:00Z", "T1": "2024-05-01T01:00:00Z", "T2": "2024-05-01T02:00:00Z",
         "T3": "2024-05-01T03:00:00Z", None: None}


@pytest.mark.slow  # the test PostgreSQL server
def test_schema_101_backfills_the_last_observation_and_the_age_of_the_content(
        fresh: tuple[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    _, uri = fresh
    shipped = list(schema.MIGRATIONS)
    monkeypatch.setattr(schema, "MIGRATIONS", [])
    old = _pg(uri)
    old.open()
    try:
        for (key, *times, error), _ in BEFORE_101:
            with old._cursor("test") as cur:
                cur.execute(f"INSERT INTO {old._quoted}.observations (spider, key, url, version, first_seen, "
                            "last_seen, last_good, last_changed, last_error) VALUES ('s', %s, 'u', 1, %s, %s, %s, %s, "
                            "%s)", (key, *(TIMES[t] for t in times), error))
    finally:
        old.close()
    monkeypatch.setattr(schema, "MIGRATIONS", shipped)
    upgraded = _pg(uri)
    upgraded.open()
    try:
        for (key, *_), (observed, since) in BEFORE_101:
            state = upgraded.read("s", key)
            assert state is not None and (state.last_observed, state.content_since) == (TIMES[observed],
                                                                                        TIMES[since]), key
    finally:
        upgraded.close()
