"""Per-crawler resources shared by the changewatch components: the store, used from one
dedicated thread when its commits can block (network stores, fsync on every commit) and inline
when they cannot, and the pool of worker processes that do the CPU-bound page normalisation on
the machine's other cores."""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
from collections.abc import Callable
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from scrapy.crawler import Crawler

from .config import ChangewatchConfig
from .store import Store, store_from_uri
from .store.sqlite import SQLiteStore

__all__ = ["StoreRunner", "WorkerPool"]

logger = logging.getLogger(__name__)
T = TypeVar("T")


class StoreRunner:
    """The crawler's store, opened by the first component that needs it, closed by the last."""

    _ATTR = "_changewatch_store_runner"

    def __init__(self, store: Store):
        self.store = store
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="changewatch-store")
        self._users = 0

    @classmethod
    def of(cls, crawler: Crawler, config: ChangewatchConfig) -> StoreRunner:
        runner: StoreRunner | None = getattr(crawler, cls._ATTR, None)
        if runner is None:
            store = store_from_uri(config.store)
            if isinstance(store, SQLiteStore):
                store.synchronous = config.store_synchronous
            runner = cls(store)
            setattr(crawler, cls._ATTR, runner)
        return runner

    async def call(self, fn: Callable[..., T], *args: Any) -> T:
        if getattr(self.store, "fast_commits", False):
            # A local SQLite commit without fsync takes ~50 µs: handing it to a thread and back
            # costs the reactor more than that (measured in bench/bench_crawl.py).
            return fn(*args)
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)

    async def acquire(self) -> None:
        if self._users == 0:
            await self.call(self.store.open)
        self._users += 1

    async def release(self) -> None:
        self._users -= 1
        if self._users == 0:
            await self.call(self.store.close)


class WorkerPool:
    """Runs CPU-bound functions in worker processes (``workers`` > 0) or inline (0)."""

    def __init__(self, workers: int):
        self.workers = workers
        self._executor: Executor | None = None

    def start(self) -> None:
        if self.workers and self._executor is None:
            # spawn, not fork: forking a process that runs a reactor and threads is unsafe
            self._executor = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"))

    def stop(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        if self._executor is None:
            return fn(*args)
        try:
            return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)
        except BrokenProcessPool:
            # A worker died (out of memory, killed): carry on inline rather than lose the run.
            logger.warning("changewatch worker pool broke; normalising in the crawl process from now on")
            self._executor = None
            return fn(*args)
