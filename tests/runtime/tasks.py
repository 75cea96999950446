"""Task functions the worker pool tests run (module level, so that a worker imports them by name;
no pytest import, so that a worker starts quickly)."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path


def pid(payload: bytes) -> bytes:
    return str(os.getpid()).encode()


def echo(payload: bytes) -> bytes:
    return payload


def thread_id(payload: bytes) -> bytes:
    return str(threading.get_ident()).encode()


def fail(payload: bytes) -> bytes:
    raise ValueError(payload.decode())


def sleep(payload: bytes) -> bytes:
    """Sleeps for *payload* seconds, then says which process it ran in."""
    time.sleep(float(payload))
    return pid(payload)


def hang_after_writing_pid(payload: bytes) -> bytes:
    """Writes its pid to the file *payload* names, then sleeps until someone kills it."""
    Path(payload.decode()).write_text(str(os.getpid()))
    time.sleep(60)
    return b"not killed"


def not_bytes(payload: bytes) -> bytes:
    return len(payload)  # type: ignore[return-value]


def meet(payload: bytes) -> bytes:
    """Adds its pid to the file *payload* names, then waits (up to 20 s) until two processes have:
    proof that two workers ran tasks at the same time, however slowly either started."""
    path = Path(payload.decode())
    with path.open("a") as f:
        f.write(f"{os.getpid()}\n")
    deadline = time.monotonic() + 20
    while len(set(path.read_text().split())) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    return pid(payload)


def die(payload: bytes) -> bytes:
    """Kills the worker it runs in."""
    os.kill(os.getpid(), signal.SIGKILL)
    return b""


def spin(payload: bytes) -> bytes:
    """Hold the GIL for *payload* seconds (pure Python work, as normalising a page is)."""
    deadline = time.monotonic() + float(payload)
    n = 0
    while time.monotonic() < deadline:
        n += 1
    return str(n).encode()
