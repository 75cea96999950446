"""The store runner: real threads, real SQLite. (The worker pool's tests: tests/runtime/.)"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from changewatch.runtime.config import ChangewatchConfig
from changewatch.store.runner import StoreRunner
from changewatch.store.sqlite import SQLiteStore


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
