"""Work one process of a distributed round is still preparing for the others: a site watch's
sitemap, read by the process that claimed the site, whose pages it then queues for the round.

A process of a round closes when the round's queue is empty and its own requests are done. A
process whose own watches were few would close while another still reads a sitemap, and leave
all of that site's pages to the reader. So the process that claims such a unit says so
(:meth:`SharedWork.begin`) until its pages are queued (:meth:`SharedWork.done`), and an idle
process stays while another says so (:meth:`SharedWork.others`), taking pages as they come.

A process says so with a key of its own that expires :data:`BUSY_TTL` seconds after it last
refreshed it (every third of that, on a timer): a process killed while it reads a sitemap holds
the others at most that long.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from redis import Redis

__all__ = ["BUSY_TTL", "SharedWork"]

logger = logging.getLogger(__name__)

#: seconds a process's "still preparing work" lasts after it last said so
BUSY_TTL = 15


class SharedWork:
    """This process's units of shared work under way, and the round's other processes' (a set of
    owners, *key*, and a key per owner, ``<key>:<owner>``)."""

    def __init__(self, server: Redis, key: str, owner: str, ttl: int):
        self.server = server
        self.key = key
        self.owner = owner
        self.ttl = ttl  # the round's: the set of owners lives as long as the round's other keys
        self.units: set[str] = set()
        self._timer: asyncio.TimerHandle | None = None
        self._said_waiting = False

    def begin(self, unit: str) -> None:
        """This process prepares work for the round (RedisError: the caller's outage handling)."""
        if not self.units:
            self._say()
            try:
                self._timer = asyncio.get_running_loop().call_later(BUSY_TTL / 3, self._tick)
            except RuntimeError:  # no event loop (a test): the key lasts BUSY_TTL
                pass
        self.units.add(unit)

    def done(self, unit: str | None = None) -> None:
        """*unit*'s work is queued (None: every unit's, this process is idle)."""
        if unit is None:
            self.units.clear()
        else:
            self.units.discard(unit)
        if self.units:
            return
        self.stop()
        from redis.exceptions import RedisError

        try:
            pipe = self.server.pipeline(transaction=False)
            pipe.srem(self.key, self.owner)
            pipe.delete(f"{self.key}:{self.owner}")
            pipe.execute()
        except RedisError as exc:  # it expires
            logger.debug("could not end this process's shared work in Redis: %s", exc)

    def others(self) -> bool:
        """Whether another live process of the round still prepares work for it."""
        owners = [o.decode() if isinstance(o, bytes) else str(o) for o in self.server.smembers(self.key)]
        others = [o for o in owners if o != self.owner]
        if not others:
            return False
        pipe = self.server.pipeline(transaction=False)
        for owner in others:
            pipe.exists(f"{self.key}:{owner}")
        alive = pipe.execute()
        gone = [o for o, live in zip(others, alive, strict=True) if not live]
        if gone:  # killed, or gone without a word: it holds nobody
            self.server.srem(self.key, *gone)
        waiting = any(alive)
        if waiting and not self._said_waiting:
            self._said_waiting = True
            logger.info("round: %d other process(es) still read a site's sitemap: this process waits for its pages",
                        sum(1 for live in alive if live))
        return waiting

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _say(self) -> None:
        pipe = self.server.pipeline(transaction=False)
        pipe.sadd(self.key, self.owner)
        pipe.expire(self.key, self.ttl)
        pipe.set(f"{self.key}:{self.owner}", "1", ex=BUSY_TTL)
        pipe.execute()

    def _tick(self) -> None:
        from redis.exceptions import RedisError

        self._timer = None
        if not self.units:
            return
        try:
            self._say()
        except RedisError as exc:  # the key may expire: the others stop waiting, nothing is lost
            logger.debug("could not refresh this process's shared work in Redis: %s", exc)
        self._timer = asyncio.get_running_loop().call_later(BUSY_TTL / 3, self._tick)
