"""An outage of a service the crawl needs (the PostgreSQL store, the Redis scheduler): when it
began, how long it may last, when to try the service again.

One budget per outage, counted from its first failure, not per call: the calls queued behind the
first share its deadline, so a crawl whose service stays away stops after one budget. Between
tries the wait doubles from *first_delay* up to *max_delay*; past the budget the service is still
tried every *max_delay*, so that whoever outlives the outage works again when it returns. What
counts as an outage (a failure worth another try) is the service's own: *transient*.

The caller logs: each service says in its own words that it lost the service and that it is back.
"""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["Outage"]


class Outage:
    """The state of one service's outages (none: :attr:`since` is None). Times are
    ``time.monotonic()``; not thread-safe (each user calls it from one thread)."""

    def __init__(self, budget: float, transient: Callable[[BaseException], bool], *, first_delay: float,
                 max_delay: float):
        self.budget = budget
        self.first_delay = first_delay
        self.max_delay = max_delay
        self._transient = transient
        #: when the current outage began (None: no outage)
        self.since: float | None = None
        #: failures in the current outage
        self.errors = 0
        #: the wait after the last failure, and the time before which the service is not tried again
        self.delay = first_delay
        self.next_try = 0.0
        self._last_try = 0.0

    def is_transient(self, exc: BaseException) -> bool:
        """Whether *exc* may go away if the work is tried again (an outage, not a bug or a refusal)."""
        return self._transient(exc)

    @property
    def left(self) -> float:
        """Seconds of the budget left (the whole budget when there is no outage)."""
        if self.since is None:
            return self.budget
        return self.since + self.budget - time.monotonic()

    def spent(self, now: float) -> bool:
        """Whether the current outage has lasted the whole budget at *now*."""
        return self.since is not None and now - self.since >= self.budget

    def may_try(self) -> bool:
        """Whether a call may try the service now: always within the budget; past it, once every
        *max_delay* (the calls queued behind the one that gave up then fail at once)."""
        if self.since is None or self.left > 0:
            return True
        return time.monotonic() - self._last_try >= self.max_delay

    def failed(self, exc: BaseException) -> bool:
        """A try failed with *exc*: count it, and wait longer before the next (:attr:`next_try`,
        from now: a timeout took its time). True when it began an outage. *exc* is raised again
        when it is not transient: it is not the service's outage."""
        if not self._transient(exc):
            raise exc
        now = self._last_try = time.monotonic()
        self.errors += 1
        began = self.since is None
        if began:
            self.since = now
            self.delay = self.first_delay
        else:
            self.delay = min(self.delay * 2, self.max_delay)
        self.next_try = now + self.delay
        return began

    def try_now(self) -> None:
        """Let the next call try the service at once, whatever the wait."""
        self.next_try = 0.0

    def pause(self, delay: float) -> float:
        """Sleep *delay* before the next try, never past the budget; the delay after it (doubled,
        up to *max_delay*), for a caller that retries in a loop of its own."""
        time.sleep(max(0.0, min(delay, self.left)))
        return min(delay * 2, self.max_delay)

    def over(self) -> float | None:
        """A try went through: the outage, if any, is over; how long it lasted (None: there was none)."""
        if self.since is None:
            return None
        lasted = time.monotonic() - self.since
        self.since = None
        self.errors = 0
        self.delay = self.first_delay
        self.next_try = 0.0
        return lasted
