"""Several crawl processes observing the same keys through one store, for every backend: each
change is logged exactly once and no update is lost (tests/store/_observer.py is one process)."""

from __future__ import annotations

import multiprocessing
import time
from collections import defaultdict

from changewatch.store import store_from_uri

from ._observer import SPIDER, changes_at, key, observe_rounds

PROCESSES = 4
KEYS = 200
ROUNDS = 5


def test_processes_observing_the_same_keys_log_each_change_once_and_lose_no_update(store_uri: str) -> None:
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(PROCESSES)
    results = context.Queue()
    workers = [context.Process(target=observe_rounds, args=(store_uri, n, KEYS, ROUNDS, barrier, results))
               for n in range(PROCESSES)]
    started = time.monotonic()
    for worker in workers:
        worker.start()
    outcomes = [results.get(timeout=120) for _ in workers]
    for worker in workers:
        worker.join(timeout=30)
    elapsed = time.monotonic() - started
    assert [error for _, _, error in outcomes if error] == []
    conflicts = sum(n for _, n, _ in outcomes)

    store = store_from_uri(store_uri)
    store.open()
    try:
        logged: dict[str, list[int]] = defaultdict(list)
        for change in store.changes(SPIDER):
            assert change.kind == "field" and change.record["changes"], change
            logged[change.key].append(change.record["round"])
        for i in range(KEYS):
            expected = [r for r in range(ROUNDS) if changes_at(i, r)]
            assert logged.get(key(i), []) == expected, f"{key(i)}: logged {logged.get(key(i))}, changed {expected}"
            state = store.read(SPIDER, key(i))
            assert state is not None
            observations = PROCESSES * ROUNDS
            assert sum(state.counters.values()) == observations, (key(i), state.counters)
            assert state.version == observations
            assert state.counters == {"baseline": 1, "field": len(expected),
                                      "none": observations - 1 - len(expected)}
    finally:
        store.close()
    assert sum(len(v) for v in logged.values()) > KEYS // 2  # the test did inject changes
    print(f"{PROCESSES} processes x {KEYS} keys x {ROUNDS} rounds in {elapsed:.1f} s, {conflicts} recomputations")
