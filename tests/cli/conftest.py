"""Stores of each backend for the commands that read one."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from changewatch.store import Store, open_store

from ..store.conftest import store_uri_of


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)])
def store_uri(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    yield from store_uri_of(request.param, tmp_path)


@pytest.fixture
def store(store_uri: str) -> Iterator[Store]:
    store = open_store(store_uri)
    yield store
    store.close()
