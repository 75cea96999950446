"""Tasks in one background thread of the crawl process: ``CHANGEWATCH_WORKERS=0`` (a single
core) and the fallback when worker processes cannot start. Slower than a second core, but the
event loop never waits for a task."""

from __future__ import annotations

import asyncio
import queue
import threading

from .worker_main import Task, call_task

__all__ = ["TaskThread"]

_Job = tuple[bytes, bytes, asyncio.AbstractEventLoop, "asyncio.Future[tuple[bytes, bytes]]"]


class TaskThread:
    """Runs tasks one at a time, first come first served, in a daemon thread, through the same
    :func:`~changewatch.runtime.worker_main.call_task` as a worker process (same replies, same
    errors). A task's timeout counts from the moment the thread takes it, not from when it
    was queued.

    A task that runs past its timeout is abandoned: threads cannot be killed, so that thread
    runs on until the task returns (holding the GIL and memory meanwhile), and a fresh thread
    takes the next tasks. Both are daemon threads: a stuck one does not hold up the exit of
    the crawl process."""

    def __init__(self) -> None:
        self._jobs = self._new_thread()
        self._lock: asyncio.Lock | None = None
        self._lock_loop: asyncio.AbstractEventLoop | None = None

    async def run(self, ref: bytes, payload: bytes, timeout: float) -> tuple[bytes, bytes]:
        """The reply's header and body; TimeoutError when the task took longer than *timeout*."""
        loop = asyncio.get_running_loop()
        async with self._lock_for(loop):
            reply: asyncio.Future[tuple[bytes, bytes]] = loop.create_future()
            self._jobs.put((ref, payload, loop, reply))
            try:
                return await asyncio.wait_for(reply, timeout)
            except (TimeoutError, asyncio.CancelledError):
                self.stop()  # the thread is busy with a task whose result nobody awaits
                self._jobs = self._new_thread()
                raise

    def stop(self) -> None:
        """The thread exits once its current task (if any) returns."""
        self._jobs.put(None)

    def _lock_for(self, loop: asyncio.AbstractEventLoop) -> asyncio.Lock:
        # an asyncio.Lock belongs to one event loop; a pool may outlive one (asyncio.run per test)
        if self._lock is None or self._lock_loop is not loop:
            self._lock, self._lock_loop = asyncio.Lock(), loop
        return self._lock

    @staticmethod
    def _new_thread() -> queue.SimpleQueue[_Job | None]:
        jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        threading.Thread(target=_serve, args=(jobs,), name="changewatch-tasks", daemon=True).start()
        return jobs


def _serve(jobs: queue.SimpleQueue[_Job | None]) -> None:
    functions: dict[bytes, Task] = {}
    while (job := jobs.get()) is not None:
        ref, payload, loop, reply = job
        result = call_task(functions, ref, payload)
        try:
            loop.call_soon_threadsafe(_settle, reply, result)
        except RuntimeError:  # the loop is closed: nobody waits for this any more
            pass


def _settle(reply: asyncio.Future[tuple[bytes, bytes]], result: tuple[bytes, bytes]) -> None:
    if not reply.done():
        reply.set_result(result)
