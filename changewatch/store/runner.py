"""The crawl's store, opened by the first component that needs it and closed by the last: used
from one dedicated thread when its commits can block (network stores, fsync on every commit) and
inline when they cannot."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from scrapy.crawler import Crawler

from ..runtime.config import ChangewatchConfig
from . import Store, store_from_uri
from .sqlite import SQLiteStore

__all__ = ["StoreRunner", "spider_name"]

T = TypeVar("T")


def spider_name(crawler: Crawler) -> str:
    """The store's namespace for the crawler's spider."""
    spider = crawler.spider
    return spider.name if spider is not None and spider.name else "default"


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
        if self.store.fast_commits:
            # A local SQLite commit without fsync takes ~50 µs: handing it to a thread and back
            # costs the reactor more than that (measured in bench/bench_crawl.py).
            return fn(*args)
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)

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
