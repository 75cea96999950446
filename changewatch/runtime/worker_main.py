"""What runs inside a worker process, and the few bytes both sides agree on.

Every message is two frames of :meth:`multiprocessing.connection.Connection.send_bytes`: a
header, then a body. The crawl process sends ``module:qualname`` and the payload; the worker
answers ``ok`` and the result, or ``error`` and a JSON object (type, message, traceback), and
first of all ``ready`` once it can take tasks (its body ``arena`` when it mapped its arena).
Nothing is pickled here: what a payload holds is decided by whoever calls the pool.

A payload that fits a slot of the worker's arena (a file in /dev/shm both processes map) is
copied there instead of written to the socket: the header then ends with ``|arena:SLOT:LENGTH``
and the body is empty. Copying 230 KB into shared memory costs the crawl process ~6 µs; writing
it to a socket ~115 µs, and as much again to read it. The crawl process reuses a slot only
after the task's reply.

This module imports only the standard library: a worker imports it before anything else and
must not pay for Scrapy.
"""

from __future__ import annotations

import functools
import importlib
import json
import mmap
import os
import queue
import signal
import threading
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

__all__ = ["ERROR", "OK", "READY", "call_task", "function_ref", "resolve_function", "serve"]

READY = b"ready"
OK = b"ok"
ERROR = b"error"
ARENA_MARK = b"|arena:"

Task = Callable[[bytes], bytes]


def resolve_function(ref: bytes) -> Any:
    """The object a ``module:qualname`` reference names, importing the module if need be."""
    module, _, qualname = ref.decode("utf-8").partition(":")
    target: Any = importlib.import_module(module)
    for part in qualname.split("."):
        target = getattr(target, part)
    return target


@functools.lru_cache(maxsize=256)
def function_ref(fn: Task) -> bytes:
    """How a worker finds *fn*: its module and qualified name. Refuses what a worker could not
    import by name (lambdas, closures, bound methods, functions of the crawl script), before
    anything is sent.

    >>> function_ref(resolve_function)
    b'changewatch.runtime.worker_main:resolve_function'
    >>> function_ref(lambda b: b)
    Traceback (most recent call last):
    ...
    ValueError: <lambda> cannot run in a worker process: pass a module-level function of an importable module
    """
    module = getattr(fn, "__module__", None)
    qualname = getattr(fn, "__qualname__", None)
    name = qualname or repr(fn)
    if not module or not qualname or "<" in qualname or module in ("__main__", "__mp_main__"):
        raise ValueError(f"{name} cannot run in a worker process: pass a module-level function of an importable "
                         f"module")
    ref = f"{module}:{qualname}".encode()
    try:
        same = resolve_function(ref) is fn
    except (ImportError, AttributeError):
        same = False
    if not same:
        raise ValueError(f"{name} cannot run in a worker process: {module}.{qualname} does not name it "
                         f"(a bound method or a decorated function?)")
    return ref


def open_arena(path: str | None) -> mmap.mmap | None:
    """Map the arena the crawl process made for this worker, and unlink its file: both
    processes hold the mapping now, and nothing is left behind however either ends."""
    if not path:
        return None
    try:
        with open(path, "r+b") as file:
            arena = mmap.mmap(file.fileno(), 0)
    except OSError:  # gone: the crawl stopped before this worker was ready (it exits on EOF)
        return None
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
    return arena


def serve(conn: Connection, lifeline: Connection, arena_path: str | None = None) -> None:
    """The worker's main loop: one task at a time, in the order sent, until the crawl process
    closes the connection. A thread reads the next task while this one runs: the crawl process
    keeps one queued (so the worker never waits for the crawl's busy event loop between two
    tasks), and its send must not wait for the task before it to finish."""
    # Ctrl-C reaches the whole process group; the crawl decides when its workers stop.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    arena = open_arena(arena_path)  # first: unlinked even when the crawl is already gone
    threading.Thread(target=_exit_with_parent, args=(lifeline,), name="changewatch-lifeline", daemon=True).start()
    tasks: queue.SimpleQueue[tuple[bytes, bytes] | None] = queue.SimpleQueue()
    threading.Thread(target=_read_tasks, args=(conn, tasks, arena), name="changewatch-reader",
                     daemon=True).start()
    try:
        conn.send_bytes(READY)
        conn.send_bytes(b"arena" if arena is not None else b"")  # without it, payloads come over the socket
        functions: dict[bytes, Task] = {}
        while (task := tasks.get()) is not None:
            header, body = call_task(functions, *task)
            conn.send_bytes(header)
            conn.send_bytes(body)
    except (BrokenPipeError, ConnectionResetError):
        # the crawl closed its end (it stopped before this worker was ready, or while it worked):
        # nobody waits for a reply, and a traceback would only add noise to the crawl's stderr
        return


def _read_tasks(conn: Connection, tasks: queue.SimpleQueue[tuple[bytes, bytes] | None],
                arena: mmap.mmap | None = None) -> None:
    while True:
        try:
            ref = conn.recv_bytes()
            payload = conn.recv_bytes()
        except (EOFError, OSError):
            tasks.put(None)
            return
        if arena is not None and ARENA_MARK in ref:
            ref, _, where = ref.partition(ARENA_MARK)
            offset, _, length = where.partition(b":")
            start = int(offset)
            payload = arena[start:start + int(length)]  # a copy: the slot is the crawl's again after the reply
        tasks.put((ref, payload))


def _exit_with_parent(lifeline: Connection) -> None:
    """Only the crawl process holds the lifeline's write end and never writes to it: the read
    returns when that process is gone, however it went (SIGKILL included). An orphaned worker
    would otherwise hold the crawl's stdout and stderr open, and a scheduler waiting on them
    would wait for ever."""
    try:
        lifeline.recv_bytes()
    except (EOFError, OSError):
        pass
    os._exit(0)


def call_task(functions: dict[bytes, Task], ref: bytes, payload: bytes) -> tuple[bytes, bytes]:
    """Run one task; the reply's header and body. *functions* caches what references name."""
    try:
        fn = functions.get(ref)
        if fn is None:
            fn = functions[ref] = resolve_function(ref)
        result = fn(payload)
        if not isinstance(result, bytes | bytearray | memoryview):
            raise TypeError(f"{ref.decode()} returned {type(result).__name__}, not bytes")
        return OK, bytes(result)
    except Exception as exc:  # the task failed, not the worker: report it and take the next one
        kind = type(exc)
        name = kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"
        error = {"type": name, "message": str(exc), "traceback": traceback.format_exc()}
        return ERROR, json.dumps(error).encode("utf-8")
