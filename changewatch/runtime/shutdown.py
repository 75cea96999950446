"""A forced shutdown (a second SIGINT or SIGTERM) exits non-zero.

Scrapy answers the second signal by stopping the reactor under the running crawl: the spider is
never closed, its feeds never confirm their changes (the next run exports them again), and
``scrapy crawl`` still exits 0, because no crawl failed to start. Nothing in Scrapy lets a
component change that status, so when the reactor shuts down under a crawl that was opened and
not closed, this says so in one line and ends the process with status 1 once the interpreter
exits (after the reactor has stopped, with the log flushed). A single SIGTERM (Scrapyd's cancel)
closes the spider first, and changes nothing here.
"""

from __future__ import annotations

import atexit
import logging
import os
import sys
from typing import Any

__all__ = ["ForcedShutdown"]

logger = logging.getLogger(__name__)

EXIT_STATUS = 1


class ForcedShutdown:
    """Watches one crawl from its spider's opening to its closing on *reactor*."""

    def __init__(self, reactor: Any):
        self.reactor = reactor
        self.closed = False
        self._trigger = reactor.addSystemEventTrigger("before", "shutdown", self._reactor_stopping)

    def spider_closed(self) -> None:
        self.closed = True
        try:
            self.reactor.removeSystemEventTrigger(self._trigger)
        except (ValueError, KeyError, TypeError):  # already fired or removed
            pass

    def _reactor_stopping(self) -> None:
        if self.closed:
            return
        logger.error("changewatch: forced shutdown: the crawl was stopped before its spider closed; changes whose "
                     "feeds did not close are exported again by the next run (exit status %d)", EXIT_STATUS)
        atexit.register(_exit, EXIT_STATUS)


def _exit(status: int) -> None:
    """Registered last, so run first of the exit handlers: the others (thread pools, the worker
    processes, which leave with their parent anyway) are skipped, as a forced shutdown asked."""
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(status)
