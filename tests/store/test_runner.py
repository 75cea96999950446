"""StoreRunner: where store calls run, and opening by the first user, closing by the last."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from changewatch.core.comparisons import Kind
from changewatch.store import Outcome, StoredState, StoreError, store_from_uri
from changewatch.store.runner import StoreRunner

from ._support import encoded, outcome


@pytest.mark.parametrize(("synchronous", "inline"), [("NORMAL", True), ("OFF", True), ("FULL", False)])
def test_store_calls_run_inline_only_when_commits_cannot_block(tmp_path: Path, synchronous: str,
                                                               inline: bool) -> None:
    runner = StoreRunner(store_from_uri(f"sqlite:///{tmp_path}/state.db?synchronous={synchronous}"))
    assert runner.store.fast_commits is inline
    threads: list[str] = []

    async def compute(state: StoredState | None) -> Outcome:
        threads.append(threading.current_thread().name)  # compute itself always runs on the loop
        return outcome(Kind.BASELINE, encoded())

    async def use() -> str:
        await runner.acquire()
        try:
            update = await runner.update("spider", "k", compute)
            assert update.committed is not None and update.committed.version == 1
            called = await runner.call(lambda: threading.current_thread().name)
            # the synchronous form (a spider middleware's sync path) runs where call() does
            assert runner.call_now(lambda: threading.current_thread().name) == called
            assert runner.call_now(runner.store.keys, "spider") == ["k"]
            return called
        finally:
            await runner.release()

    thread = asyncio.run(use())
    assert (thread == threading.main_thread().name) is inline
    assert threads == [threading.main_thread().name]
    assert (tmp_path / "state.db").exists()


def test_the_store_opens_for_the_first_user_and_closes_after_the_last(tmp_path: Path) -> None:
    store = store_from_uri(f"sqlite:///{tmp_path}/state.db")
    runner = StoreRunner(store)

    async def use() -> None:
        await runner.acquire()
        await runner.acquire()
        await runner.release()
        assert await runner.call(store.keys, "spider") == []  # still open
        await runner.release()
        assert await runner.call_opened(store.keys, "spider") == []  # opened for one call

    asyncio.run(use())
    with pytest.raises(StoreError, match="not open"):
        store.keys("spider")


def test_call_now_runs_on_the_store_thread_of_a_postgresql_store(postgresql_store_uri: str) -> None:
    """PostgreSQL commits may block (a network, a lock): calls go to the store's thread, and the
    synchronous form waits for them there, against the real server."""
    runner = StoreRunner(store_from_uri(postgresql_store_uri))
    assert runner.store.fast_commits is False

    async def compute(state: StoredState | None) -> Outcome:
        return outcome(Kind.BASELINE, encoded())

    async def use() -> tuple[str, str, list[str]]:
        await runner.acquire()
        try:
            await runner.update("spider", "k", compute)
            called = await runner.call(lambda: threading.current_thread().name)
            return called, runner.call_now(lambda: threading.current_thread().name), runner.call_now(
                runner.store.keys, "spider")
        finally:
            await runner.release()

    called, now, keys = asyncio.run(use())
    assert called == now != threading.main_thread().name
    assert keys == ["k"]
