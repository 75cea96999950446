"""The crawl's clock: when an observation was fetched, and what is due. One function so that
tests can run a crawl at a simulated time (:func:`set_clock`) instead of waiting for it; nothing
here sleeps. The store keeps its own clock (``Store.now``), against which fetch times are clamped.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

__all__ = ["now", "set_clock"]


def _system() -> datetime:
    return datetime.now(UTC)


_clock: Callable[[], datetime] = _system


def now() -> datetime:
    """The current time (aware, UTC), as the installed clock tells it."""
    return _clock()


def set_clock(clock: Callable[[], datetime] | None) -> None:
    """Install *clock* (a callable returning an aware datetime) for this process; None: the
    system clock again. For tests and simulations: a crawl never needs it."""
    global _clock
    _clock = clock or _system
