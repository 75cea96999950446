"""Copying the SQLite store's write-ahead log back into the database, in a thread of its own.

SQLite's automatic checkpoint runs inside the COMMIT that takes the log past 1,000 pages, in the
committing thread: for the crawl that is the reactor, and a checkpoint writes the pages again and,
at ``synchronous=NORMAL``, waits for two fsyncs. A first crawl of real pages writes ~60 KB a
commit (a snapshot and an evidence body), so every ~60 commits the reactor stopped for a
checkpoint: 0.4 ms of wall time a commit on average, three times the commit itself
(bench/bench_crawl.py --profile).

So the store's own connection has the automatic checkpoint off and a :class:`Checkpointer` runs
the same PASSIVE checkpoint from a second connection, a moment after commits happened. Nothing
about durability changes: a checkpoint is crash-safe at any instant, whichever thread runs it, and
it is the one SQLite would have run. Should the thread fail to start or die, the store turns the
automatic checkpoint back on (:meth:`Checkpointer.running` is False): the log never grows without
bound.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from pathlib import Path

__all__ = ["AUTOCHECKPOINT_PAGES", "Checkpointer"]

logger = logging.getLogger(__name__)

#: SQLite's default ``wal_autocheckpoint``: restored on the store's connection if the thread is gone
AUTOCHECKPOINT_PAGES = 1000


class Checkpointer:
    """A daemon thread that runs ``PRAGMA wal_checkpoint(PASSIVE)`` on *path* at most every
    *interval* seconds while commits happen (:meth:`written`), and not at all while none do."""

    def __init__(self, path: Path, interval: float = 0.2):
        self.path = path
        self.interval = interval
        self.checkpoints = 0  # checkpoints this thread ran (the tests read it)
        self._written = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._failed: str | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def written(self) -> bool:
        """A commit wrote to the log: checkpoint soon. Starts the thread at the first call. False
        if the thread could not start or has died (the caller falls back on SQLite's own)."""
        if self._thread is None:
            if self._failed is not None:
                return False
            try:
                self._thread = threading.Thread(target=self._run, name=f"changewatch-checkpoint:{self.path.name}",
                                                daemon=True)
                self._thread.start()
            except RuntimeError as exc:  # can't start new thread
                self._failed = str(exc)
                self._thread = None
                logger.warning("store %s: cannot start the checkpoint thread (%s); SQLite checkpoints "
                               "in the committing thread instead", self.path, exc)
                return False
        elif not self._thread.is_alive():
            return False
        self._written.set()
        return True

    def stop(self, timeout: float = 30.0) -> None:
        """Stop the thread after the checkpoint it may be running (the store's close checkpoints
        what is left, as SQLite does when its last connection closes)."""
        self._stopping.set()
        self._written.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        try:
            db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            self._failed = str(exc)
            logger.warning("store %s: the checkpoint thread cannot open it (%s); SQLite checkpoints in "
                           "the committing thread instead", self.path, exc)
            return
        reported: set[str] = set()
        try:
            while True:
                self._written.wait()
                if self._stopping.wait(self.interval):  # let a few commits gather, unless closing
                    return
                self._written.clear()
                try:
                    db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                    self.checkpoints += 1
                except sqlite3.Error as exc:
                    # SQLite ignores a failed automatic checkpoint too: the commits are in the log,
                    # the next checkpoint copies them. Said once per kind of failure.
                    if str(exc) not in reported:
                        reported.add(str(exc))
                        logger.warning("store %s: a checkpoint failed (%s); the commits are safe in "
                                       "its log, the next checkpoint tries again", self.path, exc)
        finally:
            db.close()
