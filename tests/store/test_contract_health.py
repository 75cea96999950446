"""The store contract, every backend: the health history counted in each observation's commit,
and health conditions opened and closed once, whoever tries (store/health.py)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import timedelta

from changewatch.core.comparisons import Kind
from changewatch.store import Outcome, StaleObservation, Store
from changewatch.store.health import HealthStore, HistoryQuery, HistoryRow

from ._support import T0, T1, encoded, outcome


def _health(store: Store) -> HealthStore:
    assert isinstance(store, HealthStore)
    return store


def _commit(store: Store, key: str, kind: Kind, *, at: str, url: str = "https://Shop.Example/p",
            distance: int | None = None, error: str | None = None, spider: str = "watch") -> None:
    state = store.read(spider, key)
    record = {"n": 1} if kind.reported else None
    store.commit(spider, key, state.version if state else None,
                 Outcome(kind, url, at, snapshot=None if kind is Kind.ERROR else encoded(), record=record,
                         error=error, distance=distance))


def test_each_commit_counts_its_observation_by_site_day_and_kind(store: Store) -> None:
    _commit(store, "a", Kind.BASELINE, at=T0)
    _commit(store, "a", Kind.NOISE, at=T1, distance=3)
    _commit(store, "b", Kind.BASELINE, at=T1)
    _commit(store, "b", Kind.NOISE, at="2024-05-01T05:00:00Z", distance=7)
    _commit(store, "b", Kind.NONE, at="2024-05-02T00:00:01Z")
    _commit(store, "b", Kind.ERROR, at="2024-05-02T00:00:02Z", error="blocked: a captcha page")
    _commit(store, "b", Kind.ERROR, at="2024-05-02T00:00:03Z", error="http: HTTP 500")
    _commit(store, "c", Kind.CONTENT, at="2024-05-02T00:00:00Z", distance=20, url="http://127.0.0.1:8080/x")
    rows = list(_health(store).history(HistoryQuery()))
    assert rows == [
        HistoryRow("watch", "127.0.0.1:8080", "2024-05-02", "content", 1, 1, 20, 20),
        HistoryRow("watch", "shop.example", "2024-05-01", "baseline", 2),
        HistoryRow("watch", "shop.example", "2024-05-01", "noise", 2, 2, 10, 7),
        HistoryRow("watch", "shop.example", "2024-05-02", "blocked", 1),
        HistoryRow("watch", "shop.example", "2024-05-02", "error", 1),
        HistoryRow("watch", "shop.example", "2024-05-02", "none", 1),
    ]
    assert [r.day for r in _health(store).history(HistoryQuery(("watch",), "2024-05-02"))] == ["2024-05-02"] * 4
    assert list(_health(store).history(HistoryQuery(("other",)))) == []


def test_a_commit_that_writes_nothing_counts_nothing(store: Store) -> None:
    _commit(store, "a", Kind.BASELINE, at=T1)
    try:
        _commit(store, "a", Kind.NONE, at=T0)  # fetched before the stored one
    except StaleObservation:
        pass
    assert [(r.kind, r.count) for r in _health(store).history(HistoryQuery())] == [("baseline", 1)]


def test_a_fetch_time_from_the_future_is_counted_on_the_stores_day(store: Store) -> None:
    _commit(store, "a", Kind.BASELINE, at="2999-01-01T00:00:00Z")
    (row,) = _health(store).history(HistoryQuery())
    assert row.day <= (store.now() + timedelta(minutes=2)).strftime("%Y-%m-%d")  # clamped, as its last_seen


def _record(error: str = "health: noise: x") -> dict[str, object]:
    return {"key": "shop.example", "url": "https://shop.example/", "kind": "error", "observed_at": T0,
            "spider": "watch", "error": error}


def test_a_condition_is_logged_once_and_its_end_once(store: Store) -> None:
    health = _health(store)
    first = health.open_condition("watch", "shop.example", "noise", T0, _record())
    assert first is not None
    assert health.open_condition("watch", "shop.example", "noise", T1, _record()) is None
    assert [(c.site, c.condition, c.since, c.change_id) for c in health.conditions("watch")] == [
        ("shop.example", "noise", T0, first)]
    assert health.conditions("other") == []
    recovered = {**_record(), "kind": "recovered"}
    closed = health.close_condition("watch", "shop.example", "noise", recovered)
    assert closed is not None and closed > first
    assert health.close_condition("watch", "shop.example", "noise", recovered) is None
    assert health.conditions("watch") == []
    logged = [(c.id, c.key, c.kind) for c in store.changes("watch")]
    assert logged == [(first, "shop.example", "error"), (closed, "shop.example", "recovered")]
    assert [c.id for c in store.undelivered("watch")] == [first, closed]  # delivered as any change


def test_crawls_finishing_at_once_log_a_condition_once(new_store: Callable[[], Store]) -> None:
    stores = [new_store() for _ in range(4)]
    results: list[int | None] = []
    barrier = threading.Barrier(len(stores))

    def race(store: Store) -> None:
        barrier.wait()
        results.append(_health(store).open_condition("watch", "s", "stale", T0, _record("health: stale: s")))

    threads = [threading.Thread(target=race, args=(s,)) for s in stores]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(r is not None for r in results) == [False, False, False, True]
    assert len(list(stores[0].changes("watch"))) == 1


def test_outcome_helper_still_counts_errors_by_class(store: Store) -> None:
    store.commit("watch", "k", None, outcome(Kind.ERROR, error="blocked: 403"))
    assert [r.kind for r in _health(store).history(HistoryQuery())] == ["blocked"]


def test_change_counts_are_counted_in_the_database_by_spider_and_kind(store: Store) -> None:
    from changewatch.store import ChangeQuery

    from ._support import log_changes

    log_changes(store)
    health = _health(store)
    assert health.change_counts(ChangeQuery()) == {("news", "error"): 1, ("news", "field"): 1,
                                                   ("shop", "content"): 1, ("shop", "entities"): 1,
                                                   ("shop", "error"): 1, ("shop", "field"): 1}
    assert health.change_counts(ChangeQuery(spiders=("shop",), kinds=("error", "field"), since=T1)) == {
        ("shop", "error"): 1}
    assert health.change_counts(ChangeQuery(since="2030-01-01T00:00:00Z")) == {}


def test_failing_keys_longest_streak_first(store: Store) -> None:
    for n, key in enumerate(["a", "b", "b", "c"]):
        _commit(store, key, Kind.ERROR, at=f"2024-05-01T0{n}:00:00Z", error=f"http: HTTP 50{n}")
    _commit(store, "d", Kind.BASELINE, at=T0)
    _commit(store, "e", Kind.ERROR, at=T0, error="timeout: 30 s", spider="other")
    health = _health(store)
    total, listed = health.failing((), 2)
    assert total == 4 and [(w.spider, w.key, w.error_streak) for w in listed] == [("watch", "b", 2), ("other", "e", 1)]
    assert listed[0].last_error == "http: HTTP 502" and listed[0].url == "https://Shop.Example/p"
    assert health.failing(("watch",), 10)[0] == 3
    assert health.failing(("nobody",), 10) == (0, [])


def test_conditions_of_every_spider(store: Store) -> None:
    health = _health(store)
    health.open_condition("b", "s", "noise", T0, _record())
    health.open_condition("a", "s", "stale", T0, _record("health: stale: s"))
    assert [(c.spider, c.condition) for c in health.conditions(None)] == [("a", "stale"), ("b", "noise")]


def test_the_history_a_store_counted_is_there_for_another_once_it_closed(new_store: Callable[[], Store]) -> None:
    # SQLite sums the history in memory between writes (store/sqlite/health.py): closing writes it
    writer, reader = new_store(), new_store()
    for n in range(5):
        _commit(writer, f"k{n}", Kind.BASELINE, at=T0)
    writer.close()
    assert [(r.kind, r.count) for r in _health(reader).history(HistoryQuery())] == [("baseline", 5)]
