"""The worker pool and the store runner: real processes, real threads, real SQLite."""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from pathlib import Path

import pytest

from changewatch.runtime.config import ChangewatchConfig
from changewatch.runtime.workers import WorkerPool
from changewatch.store.runner import StoreRunner
from changewatch.store.sqlite import SQLiteStore


def die_outside(pid: int) -> str:
    """Kills the worker process it runs in; returns when run in process *pid* (the crawl)."""
    if os.getpid() != pid:
        os._exit(3)
    return "inline"


def worker_pid() -> int:
    return os.getpid()


def test_work_runs_in_another_process() -> None:
    pool = WorkerPool(1)
    pool.start()
    try:
        assert asyncio.run(pool.run(worker_pid)) != os.getpid()
    finally:
        pool.stop()


def test_a_dead_worker_leaves_the_crawl_running_inline(caplog: pytest.LogCaptureFixture) -> None:
    pool = WorkerPool(1)
    pool.start()

    async def calls() -> list[str]:
        return list(await asyncio.gather(*(pool.run(die_outside, os.getpid()) for _ in range(3))))

    try:
        with caplog.at_level(logging.WARNING, logger="changewatch.runtime.workers"):
            assert asyncio.run(calls()) == ["inline"] * 3
            assert asyncio.run(pool.run(worker_pid)) == os.getpid()  # from now on, inline
        assert [r.message for r in caplog.records].count(
            "changewatch worker pool broke; normalising in the crawl process from now on") == 1
    finally:
        pool.stop()


class _Crawler:
    """Only the attribute StoreRunner.of() keeps its runner on."""


@pytest.mark.parametrize(("synchronous", "inline"), [("NORMAL", True), ("OFF", True), ("FULL", False)])
def test_store_calls_run_inline_only_when_commits_cannot_block(tmp_path: Path, synchronous: str,
                                                               inline: bool) -> None:
    config = ChangewatchConfig(store=f"sqlite:///{tmp_path}/state.db", store_synchronous=synchronous)
    runner = StoreRunner.of(_Crawler(), config)  # type: ignore[arg-type]
    assert isinstance(runner.store, SQLiteStore) and runner.store.fast_commits is inline

    async def use() -> str:
        await runner.acquire()
        try:
            return await runner.call(lambda: threading.current_thread().name)
        finally:
            await runner.release()

    thread = asyncio.run(use())
    assert (thread == threading.main_thread().name) is inline
    assert (tmp_path / "state.db").exists()
