"""The store contract, every backend: the change log listed and filtered in the database
(``query_changes``), and a store opened only if it exists (``open_existing``)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from changewatch.core.comparisons import Kind
from changewatch.store import ChangeLogStore, ChangeQuery, LogEntry, NoSuchStore, Store, store_from_uri

from ._support import T0, T1, T3, encoded, log_changes, outcome


def _listed(store: Store, query: ChangeQuery, **kwargs: int) -> list[int]:
    """The ``n`` of each change *query* lists."""
    assert isinstance(store, ChangeLogStore)
    return [e.record["n"] for e in store.query_changes(query, **kwargs)]


def test_every_change_oldest_first_with_its_delivery(store: Store) -> None:
    ids = log_changes(store)
    assert isinstance(store, ChangeLogStore)
    entries = list(store.query_changes(ChangeQuery()))
    assert [e.id for e in entries] == ids
    assert entries[0] == LogEntry(ids[0], "shop", "a", "field", T0, {"n": 0}, "2024-06-01T00:00:00Z")
    assert entries[2] == LogEntry(ids[2], "news", "a", "error", T1, {"n": 2}, None)  # leased, still undelivered
    assert [e.delivered_at is None for e in entries] == [False, False, True, True, True, True]


@pytest.mark.parametrize(("query", "expected"), [
    (ChangeQuery(spiders=("shop",)), [0, 1, 3, 5]),
    (ChangeQuery(spiders=("shop", "news")), [0, 1, 2, 3, 4, 5]),
    (ChangeQuery(spiders=("nobody",)), []),
    (ChangeQuery(keys=("a",)), [0, 2, 3]),
    (ChangeQuery(keys=("a", "c")), [0, 2, 3, 4]),
    (ChangeQuery(kinds=("error",)), [2, 5]),
    (ChangeQuery(kinds=("field", "entities")), [0, 3, 4]),
    (ChangeQuery(since=T1), [1, 2, 3, 4, 5]),  # at the time given, or later
    (ChangeQuery(since="2024-05-01T01:00:01Z"), [3, 4, 5]),
    (ChangeQuery(since="2030-01-01T00:00:00Z"), []),
    (ChangeQuery(undelivered=True), [2, 3, 4, 5]),
    (ChangeQuery(spiders=("shop",), keys=("a",), kinds=("entities", "field"), since=T1, undelivered=True), [3]),
    (ChangeQuery(spiders=("news",), keys=("b",)), []),
])
def test_filters(store: Store, query: ChangeQuery, expected: list[int]) -> None:
    log_changes(store)
    assert _listed(store, query) == expected


@pytest.mark.parametrize("batch_size", [1, 2, 5, 6, 1000])
def test_batches_list_the_same_changes(store: Store, batch_size: int) -> None:
    ids = log_changes(store)
    assert _listed(store, ChangeQuery(), batch_size=batch_size) == [0, 1, 2, 3, 4, 5]
    assert _listed(store, ChangeQuery(undelivered=True), batch_size=batch_size) == [2, 3, 4, 5]
    assert _listed(store, ChangeQuery(), after_id=ids[3], batch_size=batch_size) == [4, 5]


def test_keys_and_spiders_are_matched_exactly(store: Store) -> None:
    store.commit("shop", "A%", None, outcome(Kind.FIELD, encoded(), {"n": 0}))
    store.commit("shop", "Ab", None, outcome(Kind.FIELD, encoded(), {"n": 1}))
    store.commit("shop", "é ' \" ;", None, outcome(Kind.FIELD, encoded(), {"n": 2}))
    assert _listed(store, ChangeQuery(keys=("A%",))) == [0]
    assert _listed(store, ChangeQuery(keys=("a%", "ab"))) == []  # case matters
    assert _listed(store, ChangeQuery(keys=("é ' \" ;",))) == [2]
    assert _listed(store, ChangeQuery(spiders=("sho_",))) == []


def test_delivered_changes_leave_the_undelivered_list(store: Store) -> None:
    ids = log_changes(store)
    store.mark_delivered("news", [ids[2], ids[4]], T3)
    assert _listed(store, ChangeQuery(undelivered=True)) == [3, 5]
    assert _listed(store, ChangeQuery(spiders=("news",))) == [2, 4]  # still listed without the filter


def test_a_store_that_does_not_exist_is_not_created(store_uri: str, new_store: Callable[[], Store]) -> None:
    absent = store_from_uri(store_uri)
    assert isinstance(absent, ChangeLogStore)
    for _ in range(2):  # the first look created nothing: the second finds nothing either
        with pytest.raises(NoSuchStore, match="no such store"):
            absent.open_existing()
    new_store().commit("shop", "k", None, outcome(Kind.FIELD, encoded(), {"n": 0}))  # a crawl creates it
    existing = store_from_uri(store_uri)
    assert isinstance(existing, ChangeLogStore)
    existing.open_existing()
    try:
        assert [e.key for e in existing.query_changes(ChangeQuery())] == ["k"]
    finally:
        existing.close()
