"""One crawl process of test_concurrency.py: observes every key, round after round, through
StoreRunner.update and the real comparison engine. Imported by spawned processes."""

from __future__ import annotations

import asyncio
import random
from datetime import UTC, datetime, timedelta
from typing import Any

from changewatch.core.comparisons import Comparison, load_comparisons
from changewatch.core.observation import Observation
from changewatch.core.snapshot import Snapshot
from changewatch.store import Outcome, StoredState, store_from_uri
from changewatch.store.runner import StoreRunner

SPIDER = "concurrency"
START = datetime(2024, 6, 1, tzinfo=UTC)


def key(i: int) -> str:
    return f"key-{i:03d}"


def changes_at(i: int, round_: int) -> bool:
    """Whether key *i*'s value changes just before round *round_* (about a third of the keys)."""
    return round_ >= 1 and (i * 7 + round_) % 3 == 0


def value(i: int, round_: int) -> str:
    return f"v{i}.{sum(changes_at(i, r) for r in range(round_ + 1))}"


def round_time(round_: int) -> str:
    return (START + timedelta(hours=round_)).strftime("%Y-%m-%dT%H:%M:%SZ")


def _compute(obs: Observation, round_: int, comparisons: tuple[Comparison, ...]) -> Any:
    from changewatch.core.verdict import observe

    async def compute(state: StoredState | None) -> Outcome:
        old = Snapshot.decode(state.snapshot, comparisons) if state and state.snapshot else None
        verdict = observe(obs, old, comparisons)
        record = None
        if verdict.kind.reported:
            record = {"key": obs.key, "round": round_, "kind": verdict.kind.value, "observed_at": obs.observed_at,
                      **verdict.members}
        return Outcome(verdict.kind, obs.url, obs.observed_at, record=record, error=verdict.error,
                       snapshot=verdict.keep.encode(comparisons) if verdict.keep is not None else None)
    return compute


def observe_rounds(uri: str, worker: int, keys: int, rounds: int, barrier: Any, results: Any) -> None:
    """Observe keys 0..*keys* in a shuffled order each round, every process starting a round
    together; put the number of conflicts it recomputed after on *results*."""
    comparisons = tuple(c for c in load_comparisons() if c.name == "fields")
    store = store_from_uri(uri)
    runner = StoreRunner(store)
    rng = random.Random(worker)
    conflicts = 0

    async def run() -> None:
        nonlocal conflicts
        await runner.acquire()
        try:
            for round_ in range(rounds):
                barrier.wait(timeout=60)
                order = list(range(keys))
                rng.shuffle(order)
                for i in order:
                    obs = Observation(key=key(i), url=f"https://s.example/{i}", fields={"v": value(i, round_)},
                                      observed_at=round_time(round_))
                    update = await runner.update(SPIDER, obs.key, _compute(obs, round_, comparisons))
                    assert update.committed is not None and not update.stale
                    conflicts += update.conflicts
        finally:
            await runner.release()

    try:
        asyncio.run(run())
        results.put((worker, conflicts, None))
    except BaseException as exc:  # reported to the test, which fails with it
        barrier.abort()
        results.put((worker, conflicts, repr(exc)))
