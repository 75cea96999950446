"""Riding out a PostgreSQL server that goes away for a moment (a restart, a failover, a network
blip, a killed backend): which failures are worth another try, and how long one outage may last.

A call that meets a transient failure runs its transaction again, in a new one, backing off,
until ``retry_time`` seconds have passed since the *outage* began (changewatch.store.outage, as
the Redis scheduler's). Past it, the call raises a StoreError and the crawl stops: nothing is
written that was not written whole.

What makes a retry safe: every unit of work is one transaction, so a failure before COMMIT wrote
nothing. A failure *during* COMMIT is ambiguous (the server may have committed and the
acknowledgement been lost). Work that must not run twice (an observation's commit, a claim of
undelivered changes) takes its transaction's id first; the retry then asks the server whether
that transaction committed (``txid_status``, PostgreSQL ≥ 10) and, if it did, returns what the
lost transaction would have returned, so the crawl exports the change it logged.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from ..outage import Outage

__all__ = ["FIRST_DELAY", "Attempt", "DatabaseOutage", "is_transient"]

logger = logging.getLogger(__name__)

#: SQLSTATEs worth another transaction: serialization failure, deadlock, the server shutting down
#: or starting (admin_shutdown, crash_shutdown, cannot_connect_now), too many connections; and
#: every connection exception (class 08)
TRANSIENT_SQLSTATES = frozenset({"40001", "40P01", "57P01", "57P02", "57P03", "53300"})

#: the first wait between two tries, and the longest
FIRST_DELAY = 0.05
MAX_DELAY = 1.0


def is_transient(exc: BaseException) -> bool:
    """Whether *exc* (from psycopg or its pool) may go away if the transaction is run again.

    >>> import psycopg, psycopg.errors
    >>> is_transient(psycopg.errors.SerializationFailure()), is_transient(psycopg.OperationalError("lost"))
    (True, True)
    >>> is_transient(psycopg.errors.UniqueViolation()), is_transient(psycopg.errors.LockNotAvailable())
    (False, False)
    """
    import psycopg
    from psycopg_pool import PoolTimeout

    if isinstance(exc, PoolTimeout):
        return True  # no connection could be made (or got back) in time
    if not isinstance(exc, psycopg.Error):
        return False
    state = exc.sqlstate
    if state is None:  # the client lost the connection, or could not make it
        return isinstance(exc, psycopg.OperationalError)
    return state in TRANSIENT_SQLSTATES or state.startswith("08")


@dataclass(slots=True)
class Attempt:
    """One try at a unit of work, as far as it got: the transaction's id when the work took it
    (work that must not run twice does), and its result once the work returned (only COMMIT was
    left then) and the backend that ran it."""

    xid: int | None = None
    #: the server process running the transaction (``pg_backend_pid()``), taken with *xid*
    backend: int | None = None
    result: Any = None
    finished: bool = False


class DatabaseOutage(Outage):
    """The store's connection trouble (:class:`~changewatch.store.outage.Outage`, transient as
    :func:`is_transient` says), with what a database adds: whether its connections were lost (a
    new pool is needed), the tries made again over the store's life, and its log lines."""

    def __init__(self, budget: float, where: str):
        super().__init__(budget, is_transient, first_delay=FIRST_DELAY, max_delay=MAX_DELAY)
        self.where = where
        self.lost_connections = False
        self.retries = 0  # tries made again, over the store's life

    def lost(self, doing: str, exc: BaseException) -> float | None:
        """A try failed transiently: how much of the budget is left, or None when it is spent
        (the caller then gives up)."""
        if getattr(exc, "sqlstate", None) not in ("40001", "40P01"):  # not a serialization failure or deadlock
            self.lost_connections = True
        if self.failed(exc) and self.budget > 0:
            logger.warning("%s: lost the database while trying to %s (%s); trying again for up to %g s",
                           self.where, doing, _one_line(exc), self.budget)
        left = self.left
        if left <= 0:
            return None
        self.retries += 1
        return left

    def over(self) -> float | None:
        """A transaction went through: the outage, if any, is over."""
        self.lost_connections = False
        lasted = super().over()
        if lasted is not None:
            logger.warning("%s: the database answers again after %.1f s", self.where, lasted)
        return lasted


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__
