"""Every backend the store contract runs against, as a URI for a fresh, empty store.

Adding a backend is one line in ``BACKENDS`` plus a fixture that gives a fresh database (or
schema) and skips with a reason when its server is absent, e.g.::

    pytest.param("postgresql_store_uri", id="postgresql"),

    @pytest.fixture
    def postgresql_store_uri() -> Iterator[str]:
        dsn = os.environ.get("CHANGEWATCH_TEST_POSTGRESQL")
        if not dsn:
            pytest.skip("no PostgreSQL server: set CHANGEWATCH_TEST_POSTGRESQL=postgresql://...")
        ...  # create a schema named for the test, yield a URI that selects it, drop it after

The contract tests (test_contract*.py, test_concurrency.py) take ``store_uri``, ``new_store``
(a fresh connection to that one store, as another process would have) or ``store`` (one opened).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from changewatch.store import Store, store_from_uri

#: fixtures that give the URI of a fresh store, one per backend
BACKENDS = [
    pytest.param("sqlite_store_uri", id="sqlite"),
]


@pytest.fixture
def sqlite_store_uri(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path}/state.db"


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
