"""Riding out a Redis outage: the scheduler counts it from its first error, keeps the requests it
is given, tries Redis again every few seconds, and stops the crawl past
``CHANGEWATCH_ROUND_RETRY_TIME`` (see the package docstring)."""

from __future__ import annotations

import asyncio
import logging
import time

from ..runtime.services import CrawlServices
from .connection import where
from .state import RoundState

__all__ = ["Outages"]

logger = logging.getLogger("changewatch.distributed")


class Outages(RoundState):
    """The outage half of :class:`~changewatch.distributed.RoundScheduler`."""

    def _unreachable(self) -> bool:
        """True while Redis is known to be unreachable: the caller does without it. In an outage,
        Redis is tried again at most every few seconds (:data:`_RETRY_FIRST` doubling to
        :data:`_RETRY_MAX`), so that a black-holed server blocks the event loop for one socket
        timeout now and then, not on every call; when it answers, the outage ends (:meth:`_recover`,
        which raises RedisError if it does not)."""
        if self._gave_up:
            return True
        if self._outage.since is None:
            return False
        now = time.monotonic()
        if now < self._outage.next_try:
            self._over_budget(now)
            return True
        self._recover()
        return False

    def _redis_failed(self, exc: Exception) -> None:
        """A Redis call raised *exc*: an outage begins (one WARNING) or goes on."""
        self.stats.inc("redis_errors")
        self._last_error = f"{type(exc).__name__}: {exc}"
        began = self._outage.failed(exc)  # after the call: a timeout took its time before the next try
        now = time.monotonic()
        if began:
            self.stats.inc("redis_outages")
            logger.warning("round %s: Redis at %s is unreachable (%s): this process goes on with what it is fetching, "
                           "keeps the requests it makes and tries Redis again every few seconds, for up to "
                           "CHANGEWATCH_ROUND_RETRY_TIME (%g s)", self.round, where(self.server), self._last_error,
                           self.retry_time)
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # no event loop (a test): the scheduler's own calls check the budget
                pass
            else:
                # the engine may not ask the scheduler anything for a while (every slot busy)
                self._budget = loop.call_later(self.retry_time, self._budget_spent)
        else:
            logger.debug("round %s: Redis still unreachable: %s", self.round, self._last_error)
        self._over_budget(now)

    def _recover(self) -> None:
        """Try Redis in an outage: refresh the round's keys (a round trip), enqueue the requests
        held meanwhile, and end the outage with one WARNING. Raises RedisError if Redis fails
        again; a held request is dropped from :attr:`_held` only once it is enqueued."""
        assert self._outage.since is not None
        self._refresh()
        replayed = 0
        while self._held:
            if self._enqueue(self._held[0]):
                replayed += 1
            self._held.pop(0)
        lost = not self.server.exists(self.keys.marker)
        errors = self._outage.errors
        down = self._outage.over() or 0.0
        if self._budget is not None:
            self._budget.cancel()
            self._budget = None
        self.stats.inc("redis_outage_seconds", round(down))
        self.stats.inc("replayed", replayed)
        logger.warning("round %s: Redis at %s answers again after %.1f s (%d errors): %d requests this process made "
                       "meanwhile are queued now%s", self.round, where(self.server), down, errors, replayed,
                       "; Redis lost the round (restarted empty?): this process claims its watches again when it "
                       "goes idle" if lost else "")

    def _budget_spent(self) -> None:
        """The timer set when an outage began, CHANGEWATCH_ROUND_RETRY_TIME later: try Redis once
        more, and stop the crawl if it still does not answer."""
        from redis.exceptions import RedisError

        self._budget = None
        if self._outage.since is None or self._gave_up:
            return
        self._outage.try_now()
        try:
            self._unreachable()
        except RedisError as exc:
            self._redis_failed(exc)

    def _over_budget(self, now: float) -> None:
        """Stop the crawl, once, when the outage has lasted CHANGEWATCH_ROUND_RETRY_TIME."""
        if self._gave_up or self._outage.since is None or not self._outage.spent(now):
            return
        self._gave_up = True
        if self._budget is not None:
            self._budget.cancel()
            self._budget = None
        down = now - self._outage.since
        self.stats.inc("redis_outage_seconds", round(down))
        CrawlServices.of(self.crawler).fail(
            f"Redis at {where(self.server)} unreachable for more than {self.retry_time:g} s "
            f"(CHANGEWATCH_ROUND_RETRY_TIME) in round {self.round}: {self._last_error}; the {len(self._held)} requests "
            "this process made meanwhile and the watches left in the round's queue are fetched in the next round")
