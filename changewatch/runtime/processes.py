"""One worker process seen from the crawl process: started, read without blocking, killed, reaped."""

from __future__ import annotations

import asyncio
import enum
import mmap
import multiprocessing
import os
import signal
import struct
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

from .worker_main import ARENA_MARK, serve

__all__ = ["FrameReader", "InFlight", "State", "WorkerProcess", "describe_exit", "main_module_hidden", "reap"]

# spawn, never fork: the crawl process runs an event loop and threads
_CONTEXT = multiprocessing.get_context("spawn")
_READ_SIZE = 256 * 1024
_EXIT_POLL = 0.01  # s between checks for the exit code of a worker whose connection closed
_EXIT_WAIT = 2.0  # s before such a worker is killed and reported without one
_WRITEV_MAX = 64  # buffers per writev (the OS allows at least 1,024)
#: a slot of a worker's arena (one per task it may hold); larger payloads go over the socket
ARENA_SLOT = 2 * 1024 * 1024
_ARENA_DIR = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


def _make_arena(slots: int) -> tuple[mmap.mmap | None, str | None]:
    """A file of *slots* arena slots, mapped here; the worker maps it too and unlinks it. Only
    what a payload touches becomes resident. None: shared memory is not available, payloads go
    over the socket."""
    if slots <= 0 or sys.platform == "win32":
        return None, None
    _sweep_arenas()
    try:
        fd, path = tempfile.mkstemp(prefix=f"{_ARENA_PREFIX}{os.getpid()}-", dir=_ARENA_DIR)
    except OSError:
        return None, None
    try:
        os.ftruncate(fd, slots * ARENA_SLOT)
        return mmap.mmap(fd, slots * ARENA_SLOT), path
    except OSError:
        _unlink(path)
        return None, None
    finally:
        os.close(fd)


_ARENA_PREFIX = "changewatch-worker-"
_swept = False


def _sweep_arenas() -> None:
    """Remove arena files of crawl processes that are gone (once per process): a crawl killed
    while its workers were still starting leaves its workers' files behind (empty: nothing was
    written to them yet)."""
    global _swept
    if _swept:
        return
    _swept = True
    directory = _ARENA_DIR or tempfile.gettempdir()
    try:
        names = os.listdir(directory)
    except OSError:
        return
    for name in names:
        if not name.startswith(_ARENA_PREFIX):
            continue
        owner = name[len(_ARENA_PREFIX):].split("-", 1)[0]
        if not owner.isdigit() or _alive(int(owner)):
            continue
        _unlink(os.path.join(directory, name))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True


def _unlink(path: str | None) -> None:
    if path:
        try:
            os.unlink(path)
        except OSError:
            pass


def _frame_header(size: int) -> bytes:
    """The header ``Connection.send_bytes`` puts before *size* bytes (what ``recv_bytes`` reads)."""
    if size > 0x7FFFFFFF:
        return struct.pack("!i", -1) + struct.pack("!Q", size)
    return struct.pack("!i", size)


@contextmanager
def main_module_hidden() -> Iterator[None]:
    """Start processes without the main module: spawned children import it again (as
    ``__mp_main__``), and a crawl script without an ``if __name__ == "__main__"`` guard (as in
    Scrapy's own "run from a script" example) would start a second crawl in every worker. The
    workers only run functions they import by name."""
    main = sys.modules.get("__main__")
    if main is None:
        yield
        return
    saved: dict[str, Any] = {name: main.__dict__[name] for name in ("__file__", "__spec__") if name in main.__dict__}
    main.__dict__.pop("__file__", None)
    main.__spec__ = None
    try:
        yield
    finally:
        main.__dict__.update(saved)
        if "__spec__" not in saved:
            del main.__spec__


def reap(workers: list[WorkerProcess], wait: float) -> None:
    """Blocking: give *workers* (closed or killed) up to *wait* seconds to end, kill the rest."""
    deadline = time.monotonic() + wait
    for worker in workers:
        worker.process.join(max(deadline - time.monotonic(), 0))
        if worker.process.exitcode is None:
            worker.process.kill()
            worker.process.join(1)


def describe_exit(code: int | None) -> str:
    """How a process ended, from its exit code.

    >>> describe_exit(-9), describe_exit(3)
    ('killed by signal SIGKILL', 'exited with code 3')
    """
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with code {code}"


class FrameReader:
    """Cuts what non-blocking reads returned into the frames ``Connection.send_bytes`` wrote (a
    4-byte signed big-endian length, or -1 and an 8-byte length, then the bytes). The crawl
    process cannot use ``recv_bytes`` itself: it would block until a whole frame arrived.

    >>> from struct import pack
    >>> reader = FrameReader()
    >>> reader.feed(pack("!i", 2) + b"ok" + pack("!i", 3))
    [b'ok']
    >>> reader.feed(b"abc" + pack("!i", -1) + pack("!Q", 1) + b"x")
    [b'abc', b'x']
    """

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[bytes]:
        buffer = self._buffer
        buffer += data
        frames = []
        while len(buffer) >= 4:
            (size,) = struct.unpack_from("!i", buffer)
            start = 4
            if size == -1:
                if len(buffer) < 12:
                    break
                (size,) = struct.unpack_from("!Q", buffer, 4)
                start = 12
            if len(buffer) < start + size:
                break
            with memoryview(buffer) as view:
                frames.append(bytes(view[start:start + size]))
            del buffer[:start + size]
        return frames


class State(enum.Enum):
    STARTING = "starting"
    IDLE = "idle"
    BUSY = "busy"
    GONE = "gone"


class InFlight:
    """A task handed to a worker: its reply, and whether it has started (it starts when the one
    before it replied; its time limit counts from then)."""

    __slots__ = ("reply", "started")

    def __init__(self, loop: asyncio.AbstractEventLoop):
        self.reply: asyncio.Future[bytes] = loop.create_future()
        self.started: asyncio.Future[None] = loop.create_future()

    def start(self) -> None:
        if not self.started.done():
            self.started.set_result(None)


class WorkerProcess:
    """A spawned worker, its connection (the crawl process's end) and its lifeline (the write
    end, which only the crawl process holds and never writes to). The pool drives its state."""

    def __init__(self, process: BaseProcess, conn: Connection, lifeline: Connection,
                 arena: mmap.mmap | None = None, arena_path: str | None = None, slots: int = 0):
        self.process = process
        self.conn = conn
        self.lifeline = lifeline
        self.pid: int = process.pid or 0
        self.state = State.STARTING
        #: the tasks handed to it, in order: the first is running, the others wait in its pipe
        self.tasks: deque[InFlight] = deque()
        #: tasks handed to it or promised to a caller about to hand one (never more than the pool's DEPTH)
        self.load = 0
        self.ready_by = 0.0  # time.monotonic() deadline of the ready message
        self.timer: asyncio.TimerHandle | None = None
        self.loop: asyncio.AbstractEventLoop | None = None  # the loop watching conn
        self._frames = FrameReader()
        self._header: bytes | None = None
        #: what the loop still has to write to the worker (frames of tasks, in order)
        self._outbox: deque[memoryview] = deque()
        self._writing = False  # a writer callback is registered for the rest of the outbox
        #: shared memory for payloads (see worker_main): free slots, and the slot of each task
        #: handed over, in order (None: it went over the socket)
        self.arena = arena
        self._arena_path = arena_path  # unlinked by the worker once mapped; by close() if it never was
        self._free_slots = list(range(slots)) if arena is not None else []
        self._task_slots: deque[int | None] = deque()

    @classmethod
    def spawn(cls, start_timeout: float, slots: int = 0) -> WorkerProcess:
        """Start a worker with ``__main__`` hidden, and an arena of *slots* payload slots.
        Quick (fork and exec): the caller waits for its ready message, blocking in
        :meth:`wait_ready` or through the event loop."""
        conn, child_conn = _CONTEXT.Pipe(duplex=True)
        lifeline_r, lifeline_w = _CONTEXT.Pipe(duplex=False)
        arena, arena_path = _make_arena(slots)
        process = _CONTEXT.Process(target=serve, args=(child_conn, lifeline_r, arena_path),
                                   name="changewatch-worker", daemon=True)
        try:
            with main_module_hidden():
                process.start()
        except BaseException:
            conn.close()
            lifeline_w.close()
            _unlink(arena_path)
            if arena is not None:
                arena.close()
            raise
        finally:
            # The child has its own copies now. Ours would keep its end of the connection
            # open after it died (no EOF to tell us) and the lifeline's read end alive.
            child_conn.close()
            lifeline_r.close()
        worker = cls(process, conn, lifeline_w, arena, arena_path, slots)
        worker.ready_by = time.monotonic() + start_timeout
        return worker

    def wait_ready(self) -> None:
        """Block until the ready message (``start()`` of the pool, before any task runs)."""
        remaining = self.ready_by - time.monotonic()
        if not self.conn.poll(max(remaining, 0)):
            raise RuntimeError(f"worker process {self.pid} did not report ready in time")
        try:
            message = (self.conn.recv_bytes(), self.conn.recv_bytes())
        except (EOFError, OSError):
            self.process.join(1)
            raise RuntimeError(f"worker process {self.pid} {describe_exit(self.process.exitcode)} before it was "
                               "ready (its stderr says why)") from None
        if message[0] != b"ready":
            raise RuntimeError(f"worker process {self.pid} sent {message[0]!r} instead of ready")
        self.ready(message[1])

    def ready(self, body: bytes = b"") -> None:
        """The worker said it is ready, and whether it mapped its arena (it unlinked the file
        either way)."""
        self.state = State.IDLE
        self._arena_path = None
        if body != b"arena" and self.arena is not None:
            self.arena.close()
            self.arena, self._free_slots = None, []

    def task_done(self) -> None:
        """The oldest task handed over replied (or was given up): its arena slot is free."""
        if self._task_slots:
            slot = self._task_slots.popleft()
            if slot is not None:
                self._free_slots.append(slot)

    def send(self, ref: bytes, payload: bytes) -> None:
        if self.arena is not None and self._free_slots and len(payload) <= ARENA_SLOT:
            slot = self._free_slots.pop()
            offset = slot * ARENA_SLOT
            self.arena[offset:offset + len(payload)] = payload
            try:
                self._send(b"%s%s%d:%d" % (ref, ARENA_MARK, offset, len(payload)), b"")
            except BaseException:
                self._free_slots.append(slot)
                raise
            self._task_slots.append(slot)
            return
        self._send(ref, payload)
        self._task_slots.append(None)

    def _send(self, ref: bytes, payload: bytes) -> None:
        """Hand over a task, framed as ``Connection.send_bytes`` frames it. Watched by a loop,
        never blocks: what the socket does not take at once is written when it is writable (a
        230 KB page does not fit a socket buffer, and the worker's reader thread waits for the
        GIL its busy main thread holds: a blocking write stalled the whole crawl for up to the
        worker's switch interval). Raises OSError if the worker is gone."""
        if self.loop is None:
            for view in self._outbox:  # not watched: what is left goes first, the blocking way
                self.conn._send(view)  # type: ignore[attr-defined]  # frames already made
            self._outbox.clear()
            self.conn.send_bytes(ref)
            self.conn.send_bytes(payload)
            return
        idle = not self._outbox
        for data in (ref, payload):
            self._outbox.append(memoryview(_frame_header(len(data))))
            if data:  # an empty view would never be written away
                self._outbox.append(memoryview(data))
        if idle:
            self._flush(raise_errors=True)

    def _flush(self, raise_errors: bool = False) -> None:
        fd = self.conn.fileno()
        outbox = self._outbox
        while outbox:
            try:
                written = os.writev(fd, list(outbox)[:_WRITEV_MAX])
            except BlockingIOError:
                break
            except OSError:
                outbox.clear()  # the worker is gone: its EOF tells the pool, which fails its tasks
                self._stop_writing()
                if raise_errors:
                    raise
                return
            while written and outbox:
                head = outbox[0]
                if len(head) <= written:
                    written -= len(head)
                    outbox.popleft()
                else:
                    outbox[0] = head[written:]
                    written = 0
        if outbox and not self._writing and self.loop is not None:
            self.loop.add_writer(fd, self._flush)
            self._writing = True
        elif not outbox:
            self._stop_writing()

    def _stop_writing(self) -> None:
        if self._writing:
            self._writing = False
            if self.loop is not None and not self.loop.is_closed():
                self.loop.remove_writer(self.conn.fileno())

    def read(self) -> list[tuple[bytes, bytes]] | None:
        """The whole messages one non-blocking read completed; None at EOF. Called when the
        event loop saw the connection readable: a single read then returns at once."""
        try:
            data = os.read(self.conn.fileno(), _READ_SIZE)
        except OSError:
            data = b""
        if not data:
            return None
        messages = []
        for frame in self._frames.feed(data):
            if self._header is None:
                self._header = frame
            else:
                messages.append((self._header, frame))
                self._header = None
        return messages

    def watch(self, loop: asyncio.AbstractEventLoop, callback: Callable[[WorkerProcess], None]) -> None:
        """Let *loop* call ``callback(self)`` when the connection is readable (only one loop)."""
        self.unwatch()
        os.set_blocking(self.conn.fileno(), False)
        loop.add_reader(self.conn.fileno(), callback, self)
        self.loop = loop
        if self._outbox:
            self._flush()

    def unwatch(self) -> None:
        self._stop_writing()
        if self.loop is not None and not self.loop.is_closed():
            self.loop.remove_reader(self.conn.fileno())
        self.loop = None
        if not self.conn.closed:
            os.set_blocking(self.conn.fileno(), True)  # what is left in the outbox waits for the next watch
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    def close(self, kill: bool = False) -> None:
        """Stop watching and close both ends: the worker sees EOF on either and exits."""
        if self.state is State.GONE:
            return
        self.state = State.GONE
        self.unwatch()
        self._outbox.clear()
        self._task_slots.clear()
        _unlink(self._arena_path)  # a worker that never started never unlinked it
        self._arena_path = None
        if self.arena is not None:
            self.arena.close()
            self.arena = None
        if kill:
            self.process.kill()
        self.conn.close()
        self.lifeline.close()

    def when_exited(self, loop: asyncio.AbstractEventLoop, then: Callable[[int | None], None],
                    patience: float = _EXIT_WAIT) -> None:
        """``then(exit code)`` once the process has ended, polled without blocking the loop: EOF
        comes as a process exits, a moment before it can be reaped. ``then(None)`` if it has
        not ended after *patience* seconds (it is killed). Nothing if the loop closed meanwhile:
        the pool's stop() reaps what is left."""
        code = self.process.exitcode
        if code is None:
            if loop.is_closed():
                return
            if patience > 0:
                loop.call_later(_EXIT_POLL, self.when_exited, loop, then, patience - _EXIT_POLL)
                return
            self.process.kill()
        then(code)
