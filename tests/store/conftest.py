"""Every backend the store contract runs against, as a URI for a fresh, empty store.

Adding a backend is one line in ``BACKENDS`` plus a fixture that gives a fresh database (or
schema) and skips with a reason when its server is absent (fails under CI=true: tests/services.py).

PostgreSQL: ``CHANGEWATCH_TEST_POSTGRESQL`` (default ``postgresql://postgres@127.0.0.1:5432/test``)
names a database the tests may create schemas in; each test gets a fresh schema (``?schema=``),
dropped after it.

The contract tests (test_contract*.py, test_concurrency.py) take ``store_uri``, ``new_store``
(a fresh connection to that one store, as another process would have) or ``store`` (one opened).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from functools import lru_cache
from pathlib import Path

import pytest

from changewatch.store import Store, store_from_uri

from ..services import require

#: fixtures that give the URI of a fresh store, one per backend; a backend that is a real server is
#: slow, so the contract holds for SQLite in the fast lane and for every backend in the whole suite
BACKENDS = [
    pytest.param("sqlite_store_uri", id="sqlite"),
    pytest.param("postgresql_store_uri", id="postgresql", marks=pytest.mark.slow),
]

POSTGRESQL = os.environ.get("CHANGEWATCH_TEST_POSTGRESQL", "postgresql://postgres@127.0.0.1:5432/test")
POSTGRESQL_HOW = ("start it (Debian: pg_ctlcluster 15 main start; or docker run -d -p 5432:5432 "
                  "-e POSTGRES_HOST_AUTH_METHOD=trust -e POSTGRES_DB=test postgres:16) or point "
                  "CHANGEWATCH_TEST_POSTGRESQL at a database the tests may create schemas in; "
                  "pip install -e '.[test]' installs the driver")


@pytest.fixture
def sqlite_store_uri(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path}/state.db"


@lru_cache(maxsize=1)
def postgresql_unavailable() -> str | None:
    """Why the test PostgreSQL server cannot be used; None when it can (asked once per run)."""
    try:
        import psycopg
    except ImportError as exc:
        return f"no PostgreSQL driver ({exc})"
    try:
        with psycopg.connect(POSTGRESQL, connect_timeout=3, autocommit=True) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as exc:
        return f"cannot connect to {POSTGRESQL}: {str(exc).strip()}"
    return None


def postgresql_schema_uri() -> tuple[str, str]:
    """A fresh schema's name and a store URI that selects it (the store creates the schema)."""
    why = postgresql_unavailable()
    require(why is None, f"the test PostgreSQL server ({why})", POSTGRESQL_HOW)
    name = f"cwtest_{uuid.uuid4().hex[:12]}"
    return name, f"{POSTGRESQL}{'&' if '?' in POSTGRESQL else '?'}schema={name}"


def drop_postgresql_schema(name: str) -> None:
    import psycopg

    with psycopg.connect(POSTGRESQL, connect_timeout=3, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')


def fresh_postgresql_store() -> Iterator[str]:
    """A fresh schema's store URI (a fixture's body), the schema dropped after the test."""
    name, uri = postgresql_schema_uri()
    yield uri
    drop_postgresql_schema(name)


def store_uri_of(backend: str, tmp_path: Path) -> Iterator[str]:
    """A fresh store's URI on *backend* ("sqlite" or "postgresql"), its schema dropped after: for a
    fixture parametrised by backend outside tests/store, where this directory's fixtures are not seen."""
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path / 'state.db'}"
        return
    yield from fresh_postgresql_store()


@pytest.fixture
def postgresql_store_uri() -> Iterator[str]:
    yield from fresh_postgresql_store()


@pytest.fixture(params=BACKENDS)
def store_uri(request: pytest.FixtureRequest) -> str:
    uri: str = request.getfixturevalue(request.param)
    return uri


@pytest.fixture
def new_store(store_uri: str) -> Iterator[Callable[[], Store]]:
    """Opens another connection to the test's store; all are closed after the test."""
    opened: list[Store] = []

    def connect() -> Store:
        store = store_from_uri(store_uri)
        store.open()
        opened.append(store)
        return store

    yield connect
    for store in opened:
        store.close()


@pytest.fixture
def store(new_store: Callable[[], Store]) -> Store:
    return new_store()
