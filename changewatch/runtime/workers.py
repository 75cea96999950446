"""The pool of worker processes that do the CPU-bound page work (normalising, fingerprinting) on
the machine's other cores, so that the crawl's event loop never waits for it.

Workers are spawned (never forked: the crawl process runs an event loop and threads), all of
them in :meth:`WorkerPool.start`, with ``__main__`` hidden so that a crawl script without an
``if __name__ == "__main__"`` guard is never run again in them (replacements too). A task is a
module-level function ``bytes -> bytes`` named by module and qualified name; the pool moves
bytes only (:mod:`changewatch.runtime.worker_main` has the wire format). The crawl process reads
replies through the running event loop (``loop.add_reader``). A worker holds up to
:data:`DEPTH` tasks: one running and one waiting in its pipe, so that it goes straight from one
page to the next instead of idling until the crawl's busy event loop reads its reply and sends
another (the gap cost a fifth of the crawl's throughput on small pages). Waiting tasks are
served first come, first served; a task waiting in a worker that dies or is killed runs on
another worker. A task that runs past its timeout gets its worker killed;
a worker that dies is replaced; either way the task fails with its own error and the crawl goes
on. Without worker processes (``workers=0``, or they cannot start) tasks run in one thread.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import sys
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from .errors import WorkerCrashed, WorkerError, WorkerTaskError, WorkerTimeout
from .processes import InFlight, State, WorkerProcess, describe_exit, reap
from .taskthread import TaskThread
from .worker_main import ERROR, OK, READY, function_ref

__all__ = ["DEPTH", "WorkerCrashed", "WorkerError", "WorkerPool", "WorkerTaskError", "WorkerTimeout"]

logger = logging.getLogger(__name__)

_MAX_FAILED_STARTS = 3  # replacements in a row that never got ready: worker processes do not work here
_STOP_WAIT = 2.0  # s stop() waits for workers to exit before it kills them
#: tasks handed to one worker at a time: one running, the next already in its pipe
DEPTH = 2


class WorkerPool:
    """Runs ``fn(payload) -> bytes`` in ``workers`` processes (0: in one thread).

    ``stats`` counts ``tasks`` (every task handed to a worker or the thread), ``timeouts``,
    ``crashes`` (workers that died unasked, busy or idle), ``replaced`` (replacement processes
    started) and ``inline`` (tasks run in the thread)."""

    def __init__(self, workers: int, *, task_timeout: float = 60.0, start_timeout: float = 120.0):
        if workers < 0:
            raise ValueError(f"workers must be >= 0, not {workers}")
        self.workers = workers
        self.task_timeout = task_timeout
        self.start_timeout = start_timeout
        self.stats: dict[str, int] = dict.fromkeys(("tasks", "timeouts", "crashes", "replaced", "inline"), 0)
        self._workers: list[WorkerProcess] = []
        self._ending: list[WorkerProcess] = []  # closed or killed, not reaped yet
        self._waiting: deque[asyncio.Future[WorkerProcess | None]] = deque()
        self._thread: TaskThread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._started = self._stopped = False
        self._failed_starts = 0

    @property
    def processes(self) -> list[int]:
        """The pids of the live worker processes."""
        return [w.pid for w in self._workers if w.process.is_alive()]

    def start(self, *, wait: bool = True) -> None:
        """Start every worker and wait until each is ready: a broken environment shows now, with
        one warning, and the pool then runs tasks in a thread. Blocks (up to ``start_timeout``).

        ``wait=False`` (what the crawl does) returns once the processes are spawned: they boot
        (~0.1 s of imports) while the crawl fetches its first pages, and the first tasks wait
        for them on the event loop. A worker that cannot start is then replaced, and after
        three failures in a row the pool falls back to the thread with one warning."""
        if self._started and not self._stopped:
            return
        self._started, self._stopped = True, False  # a stopped pool starts again (a spider opened twice)
        self._thread, self._loop, self._failed_starts = None, None, 0
        if self.workers == 0:
            self._thread = TaskThread()
            return
        if sys.platform == "win32":  # select() takes sockets only, the worker pipes are not (never tested there)
            self._fall_back("cannot watch worker processes from the event loop on Windows")
            return
        try:
            for _ in range(self.workers):
                self._workers.append(WorkerProcess.spawn(self.start_timeout, slots=DEPTH))
            if not wait:
                return
            for worker in self._workers:
                worker.wait_ready()
        except Exception as exc:
            self._fall_back(f"could not start its worker processes ({exc})")
            self._reap_now()
            return
        logger.debug("changewatch worker processes %s ready", self.processes)

    async def run(self, fn: Callable[[bytes], bytes], payload: bytes, *, timeout: float | None = None) -> bytes:
        """``fn(payload)`` in a worker. Raises :class:`WorkerTimeout` after *timeout* seconds
        (default ``task_timeout``) of running, :class:`WorkerCrashed`, :class:`WorkerTaskError`,
        or :class:`WorkerError` when the pool is stopped or not started."""
        ref = function_ref(fn)
        limit = self.task_timeout if timeout is None else timeout
        if self._stopped or not self._started:
            raise WorkerError("pool stopped" if self._stopped else "pool not started: call start() first")
        if self._thread is None:
            self._use_loop(asyncio.get_running_loop())
            while (worker := await self._free_worker()) is not None:
                try:
                    return await self._run_on(worker, ref, payload, limit)
                except _NotTaken:
                    continue  # the worker had died idle: the task never started, the next worker takes it
        return await self._run_in_thread(ref, payload, limit)

    def stop(self) -> None:
        """Close every worker's connection and lifeline (they exit at once), wait a little, kill
        what is left. Tasks not finished fail with ``WorkerError("pool stopped")``. Idempotent."""
        if self._stopped:
            return
        self._stopped = True
        error = WorkerError("pool stopped")
        while self._waiting:
            _fail(self._waiting.popleft(), error)
        for worker in list(self._workers):
            for flight in worker.tasks:
                _fail(flight.started, error)
                _fail(flight.reply, error)
            worker.tasks.clear()
            self._retire(worker)
        self._reap_now()
        if self._thread is not None:
            self._thread.stop()

    # --- tasks -------------------------------------------------------------------------------------------------

    async def _free_worker(self) -> WorkerProcess | None:
        """A worker with room for a task (the least loaded), the room taken, waiting for one if
        need be; None if the pool fell back to the thread meanwhile."""
        if not self._waiting:
            room = [w for w in self._workers if w.state in (State.IDLE, State.BUSY) and w.load < DEPTH]
            if room:
                worker = min(room, key=lambda w: w.load)
                worker.load += 1
                worker.state = State.BUSY
                return worker
        waiter: asyncio.Future[WorkerProcess | None] = asyncio.get_running_loop().create_future()
        self._waiting.append(waiter)
        try:
            return await waiter
        except asyncio.CancelledError:
            if waiter in self._waiting:
                self._waiting.remove(waiter)
            # handed a worker between the hand-over and our cancellation: give its room back
            if not waiter.cancelled() and waiter.exception() is None and (handed := waiter.result()):
                handed.load -= 1
                self._hand_over(handed)
            raise

    async def _run_on(self, worker: WorkerProcess, ref: bytes, payload: bytes, limit: float) -> bytes:
        flight = InFlight(asyncio.get_running_loop())
        worker.tasks.append(flight)
        if worker.tasks[0] is flight:
            flight.start()
        try:
            worker.send(ref, payload)
        except OSError:  # it died; its EOF has not been read yet
            worker.tasks.remove(flight)
            worker.load -= 1
            self._lost(worker)
            raise _NotTaken from None
        self.stats["tasks"] += 1
        await flight.started  # _NotTaken when its worker died before it began: the next worker takes it
        reply = flight.reply
        try:
            async with asyncio.timeout(limit):
                return await reply
        except (TimeoutError, asyncio.CancelledError) as exc:
            if isinstance(exc, TimeoutError) and reply.done() and not reply.cancelled():
                return reply.result()  # the reply beat the timer by a hair
            if worker.tasks and worker.tasks[0] is flight:  # still at it: the only way back is to kill it
                self._abandon(worker)
            if isinstance(exc, asyncio.CancelledError):
                raise
            self.stats["timeouts"] += 1
            logger.warning("changewatch worker process %d ran past the %g s timeout of %s; killed it, starting a "
                           "replacement", worker.pid, limit, ref.decode())
            raise WorkerTimeout(f"{ref.decode()} took longer than {limit:g} s; worker process {worker.pid} was "
                                f"killed and replaced", limit=limit) from None

    async def _run_in_thread(self, ref: bytes, payload: bytes, limit: float) -> bytes:
        assert self._thread is not None
        self.stats["tasks"] += 1
        self.stats["inline"] += 1
        try:
            header, body = await self._thread.run(ref, payload, limit)
        except TimeoutError:
            self.stats["timeouts"] += 1
            logger.warning("changewatch task %s ran past its %g s timeout in the task thread; abandoned it",
                           ref.decode(), limit)
            raise WorkerTimeout(f"{ref.decode()} took longer than {limit:g} s; its thread was abandoned",
                                limit=limit) from None
        if header == OK:
            return body
        raise WorkerTaskError.from_reply(body)

    # --- replies and deaths, seen by the event loop ---------------------------------------------------------------

    def _on_readable(self, worker: WorkerProcess) -> None:
        messages = worker.read()
        if messages is None:
            self._on_eof(worker)
            return
        for header, body in messages:
            if header == READY and worker.state is State.STARTING:
                self._failed_starts = 0
                if worker.timer is not None:
                    worker.timer.cancel()
                logger.debug("changewatch worker process %d ready", worker.pid)
                worker.ready(body)
                self._hand_over(worker)
            elif header in (OK, ERROR) and worker.state is State.BUSY and worker.tasks:
                reply = worker.tasks.popleft().reply
                worker.task_done()
                worker.load -= 1
                if worker.tasks:
                    worker.tasks[0].start()  # it is running now: its time starts
                self._hand_over(worker)
                if not reply.done():
                    if header == OK:
                        reply.set_result(body)
                    else:
                        reply.set_exception(WorkerTaskError.from_reply(body))

    def _on_eof(self, worker: WorkerProcess) -> None:
        if worker.state is State.STARTING:
            pid = worker.pid
            self._retire(worker, then=lambda how: self._start_failed(f"worker process {pid} {how} before it was "
                                                                     "ready"))
            return
        self._lost(worker)

    def _lost(self, worker: WorkerProcess) -> None:
        """A worker died unasked: report it (with how, once known) and replace it. The task it
        was running fails; those waiting in its pipe run elsewhere."""
        running = self._clear(worker)
        reply, pid = (running.reply if running is not None else None), worker.pid
        self.stats["crashes"] += 1

        def report(how: str) -> None:
            logger.warning("changewatch worker process %d %s%s; started a replacement", pid, how,
                           " while running a task" if reply is not None else "")
            if reply is not None:
                _fail(reply, WorkerCrashed(f"worker process {pid} {how} while running the task; it was replaced",
                                           how=how))

        self._retire(worker, then=report)
        self._replace()

    def _abandon(self, worker: WorkerProcess) -> None:
        self._clear(worker)
        self._retire(worker, kill=True)
        self._replace()

    @staticmethod
    def _clear(worker: WorkerProcess) -> InFlight | None:
        """Take *worker*'s tasks away: the running one is returned, the others are told they
        never started (their callers hand them to another worker)."""
        flights, running = list(worker.tasks), None
        worker.tasks.clear()
        worker.load = 0
        for flight in flights:
            if flight.started.done():
                running = flight
            else:
                _fail(flight.started, _NotTaken())
        return running

    # --- starting, replacing, retiring ---------------------------------------------------------------------------

    def _replace(self) -> None:
        if self._stopped or self._thread is not None or self._loop is None:
            return
        try:
            worker = WorkerProcess.spawn(self.start_timeout, slots=DEPTH)
        except Exception as exc:
            self._start_failed(f"could not start a worker process ({exc})")
            return
        self.stats["replaced"] += 1
        self._workers.append(worker)
        worker.watch(self._loop, self._on_readable)
        worker.timer = self._loop.call_later(self.start_timeout, self._start_expired, worker)

    def _start_expired(self, worker: WorkerProcess) -> None:
        if worker.state is State.STARTING:
            self._retire(worker, kill=True)
            self._start_failed(f"worker process {worker.pid} was not ready within {self.start_timeout:g} s")

    def _start_failed(self, why: str) -> None:
        if self._thread is not None or self._stopped:
            return  # fallen back already (workers that failed together report one by one)
        self._failed_starts += 1
        if self._failed_starts >= _MAX_FAILED_STARTS:
            self._fall_back(f"could not start a worker process {self._failed_starts} times in a row (last: {why})")
        else:
            logger.debug("changewatch %s; trying again", why)
            self._replace()

    def _fall_back(self, why: str) -> None:
        logger.warning("changewatch %s; running tasks in a thread of the crawl process instead (slower)", why)
        self._thread = TaskThread()
        for worker in list(self._workers):
            if worker.state is not State.BUSY:  # busy ones finish their tasks first (_hand_over)
                self._retire(worker, kill=True)
        while self._waiting:
            waiter = self._waiting.popleft()
            if not waiter.done():
                waiter.set_result(None)

    def _hand_over(self, worker: WorkerProcess) -> None:
        """*worker* has room: to the first tasks waiting, else it is idle (or less busy)."""
        if self._thread is not None or self._stopped:
            if not worker.tasks:
                self._retire(worker)
            return
        while worker.load < DEPTH and self._waiting:
            waiter = self._waiting.popleft()
            if not waiter.done():
                worker.load += 1
                waiter.set_result(worker)
        worker.state = State.BUSY if worker.load else State.IDLE

    def _retire(self, worker: WorkerProcess, *, kill: bool = False, then: Callable[[str], None] | None = None) -> None:
        """Out of the pool: closed (it exits on EOF) or killed, then reaped; ``then(how it ended)``."""
        if worker in self._workers:
            self._workers.remove(worker)
        worker.close(kill=kill)
        if worker not in self._ending:
            self._ending.append(worker)
        if self._loop is not None and not self._stopped:
            worker.when_exited(self._loop, functools.partial(self._ended, worker, then))

    def _ended(self, worker: WorkerProcess, then: Callable[[str], None] | None, code: int | None) -> None:
        if code is not None and worker in self._ending:
            self._ending.remove(worker)
        if then is not None:
            then(describe_exit(code) if code is not None else "closed its connection without exiting (killed it)")

    def _reap_now(self) -> None:
        """Blocking (start and stop only): wait a little for retired workers, kill the rest."""
        reap(self._ending, _STOP_WAIT)
        self._ending.clear()

    def _use_loop(self, loop: asyncio.AbstractEventLoop) -> None:
        """Watch the workers from *loop*. Normally once; a pool may outlive an event loop
        (asyncio.run once per test), and whatever was in flight on the old one is lost."""
        if loop is self._loop:
            return
        self._loop = loop
        self._waiting = deque(w for w in self._waiting if w.get_loop() is loop)
        for worker in list(self._workers):
            if worker.state is State.BUSY:
                self._abandon(worker)
                continue
            worker.watch(loop, self._on_readable)
            if worker.state is State.STARTING:
                remaining = max(worker.ready_by - time.monotonic(), 0)
                worker.timer = loop.call_later(remaining, self._start_expired, worker)


class _NotTaken(Exception):
    """The worker a task was handed to was dead already: the task did not start."""


def _fail(future: asyncio.Future[Any], error: Exception) -> None:
    if not future.done():
        try:
            future.set_exception(error)
        except RuntimeError:  # its event loop is closed: nobody awaits it any more
            pass

