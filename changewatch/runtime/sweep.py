"""A once-a-second timer that lets Twisted drop the timed calls a crawl cancels (a crawl's
memory does not grow with its pages).

Every download schedules timed calls on the reactor (its timeout, the connection's) and cancels
them when the response comes. Twisted keeps a cancelled call in its heap until the reactor runs
its timed calls, where it drops them all at once (``runUntilCurrent``: more than 50 cancelled and
more than half the heap). With the asyncio reactor Scrapy installs, that happens only when a timed
call comes due, and the first one due is the oldest live timeout, ``DOWNLOAD_TIMEOUT`` away (30 s in
this project, 180 s by Scrapy's default): a crawl held every page's cancelled calls of the last
30 s, two a page, ~12,000 objects after 6,000 real pages (measured; plain Scrapy holds them for its
180 s). A no-op timed call every second makes the reactor run them: the heap holds a second's worth.
It costs one timed call a second.
"""

from __future__ import annotations

from typing import Any

from twisted.internet.task import LoopingCall

__all__ = ["SWEEP_SECONDS", "start_sweep"]

SWEEP_SECONDS = 1.0


def _nothing() -> None:
    """Coming due is the point: the reactor then drops the cancelled calls."""


def start_sweep(reactor: Any) -> LoopingCall | None:
    """Start the sweep on *reactor* (None: a reactor without timed calls of Twisted's kind)."""
    if not callable(getattr(reactor, "callLater", None)):
        return None
    sweep = LoopingCall(_nothing)
    sweep.clock = reactor
    sweep.start(SWEEP_SECONDS, now=False)
    return sweep
