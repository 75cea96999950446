"""The crawl's store, opened by the first component that needs it and closed by the last: used
from one dedicated thread when its commits can block (network stores, fsync on every commit) and
inline when they cannot; and the optimistic update loop every observation goes through."""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import random
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from .errors import StaleObservation, StoreError, VersionConflict
from .protocol import Store
from .records import Committed, Lease, Outcome, StoredState

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

__all__ = ["StoreRunner", "Update", "spider_name"]

T = TypeVar("T")

#: seconds: the first pause after a VersionConflict is up to this long, doubling with each one more
CONFLICT_PAUSE = 0.002

#: what an observation does to a key, computed from its stored state (None: nothing to commit)
Compute = Callable[[StoredState | None], Awaitable[Outcome | None]]


def spider_name(crawler: Crawler) -> str:
    """The store's namespace for the crawler's spider."""
    spider = crawler.spider
    return spider.name if spider is not None and spider.name else "default"


@dataclass(frozen=True, slots=True)
class Update:
    """What :meth:`StoreRunner.update` did with one observation."""

    outcome: Outcome | None  # what was committed (clamped as stored); None: nothing
    committed: Committed | None
    stale: bool = False  # the observation was older than the stored one: nothing written
    conflicts: int = 0  # how many times it recomputed after a VersionConflict


class StoreRunner:
    """One crawler's store (owned by a per-crawler extension): opened by the first component
    that acquires it, closed by the last."""

    def __init__(self, store: Store):
        self.store = store
        # Stores written before commit() took the state read (an optional keyword) still work.
        self._pass_previous = "previous" in inspect.signature(store.commit).parameters
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="changewatch-store")
        self._users = 0

    async def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        if self.store.fast_commits:
            # A local SQLite commit without fsync takes ~50 µs: handing it to a thread and back
            # costs the reactor more than that (measured in bench/bench_crawl.py).
            return fn(*args, **kwargs)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, lambda: fn(*args, **kwargs))

    def call_now(self, fn: Callable[..., T], *args: Any) -> T:
        """:meth:`call` for a synchronous caller on the reactor (once a crawl, not per item): a
        store that is not called inline is still called on its own thread, which this waits for."""
        if self.store.fast_commits:
            return fn(*args)
        return self._executor.submit(fn, *args).result()

    async def call_opened(self, fn: Callable[..., T], *args: Any) -> T:
        """Call *fn* with the store held open for the call: for work at a crawl's edges (before
        the pipelines open it, or after they have closed it)."""
        await self.acquire()
        try:
            return await self.call(fn, *args)
        finally:
            await self.release()

    async def acquire(self) -> None:
        if self._users == 0:
            await self.call(self.store.open)
        self._users += 1

    async def release(self) -> None:
        self._users -= 1
        if self._users == 0:
            await self.call(self.store.close)
            self._executor.shutdown(wait=False)
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="changewatch-store")

    async def update(self, spider: str, key: str, compute: Compute, *, lease: Lease | None = None,
                     attempts: int = 20) -> Update:
        """Read *key*, ``await compute(state)`` outside any transaction, and commit its outcome if
        the key has not moved since; else read it again and recompute. Raises StoreError when
        *attempts* reads all lost to other writers, and whatever *compute* raises (nothing is
        written then)."""
        for conflicts in range(attempts):
            state = await self.call(self.store.read, spider, key)
            outcome = await compute(state)
            if outcome is None:
                return Update(None, None, conflicts=conflicts)
            try:
                extra = {"previous": state} if self._pass_previous else {}
                committed = await self.call(self.store.commit, spider, key, state.version if state else None,
                                            outcome, lease=lease, **extra)
            except VersionConflict:
                # A random pause before reading again: the writer that just won reads again at
                # once, and without one a loser can keep losing to it in lockstep.
                await asyncio.sleep(random.uniform(0, min(CONFLICT_PAUSE * 2 ** conflicts, 0.25)))
                continue
            except StaleObservation:
                return Update(None, None, stale=True, conflicts=conflicts)
            return Update(_as_stored(outcome, committed), committed, conflicts=conflicts)
        raise StoreError(f"key {key!r} of spider {spider!r}: another writer committed it first {attempts} times "
                         "in a row; no observation can be that slow and still be useful")


def _as_stored(outcome: Outcome, committed: Committed) -> Outcome:
    """*outcome* with the fetch time the store kept (and its record's, when it was clamped)."""
    if not committed.clamped:
        return outcome
    record = outcome.record
    if record is not None and "observed_at" in record:
        record = {**record, "observed_at": committed.observed_at}
    return dataclasses.replace(outcome, observed_at=committed.observed_at, record=record)
