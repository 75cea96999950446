"""Waiting for something another thread or process does, without a fixed sleep."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable


def wait_until(condition: Callable[[], bool], timeout: float = 5.0) -> bool:
    """True as soon as *condition()* is; False if it still is not after *timeout* seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


async def until(condition: Callable[[], bool], timeout: float = 5.0) -> bool:
    """:func:`wait_until` on a running event loop, which goes on while it waits."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.01)
    return True
