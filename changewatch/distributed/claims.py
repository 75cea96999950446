"""A round's claims: each start request (a watch, or a unit of work done whole by one process)
is claimed once per round in Redis, by the first process to reach it; other requests go through
the round's seen set; a claim whose reply was lost is still this process's own."""

from __future__ import annotations

import asyncio
import logging

from scrapy import Request

from .. import meta
from ..runtime.services import CrawlServices
from .keys import CLAIMED, claim_value, parse_claim
from .state import RoundState

__all__ = ["Claims"]

logger = logging.getLogger("changewatch.distributed")

_EXPIRE_EVERY = 64  # pushes between two EXPIREs of the queue key
_WAIT_POLL = 0.5  # seconds between two looks at the queue while another process reads a sitemap


class Claims(RoundState):
    """The claiming and queueing half of :class:`~changewatch.distributed.RoundScheduler`."""

    def _identity(self, request: Request) -> str:
        key = request.meta.get(meta.KEY)
        if key is not None:
            return f"key:{key}"
        assert self.crawler.request_fingerprinter is not None
        return "fp:" + self.crawler.request_fingerprinter.fingerprint(request).hex()

    def _enqueue(self, request: Request) -> bool:
        """Claim a start, or filter another request through the round's seen set, and push it.
        Raises RedisError when Redis fails midway: the caller holds *request* and enqueues it again
        when Redis answers; what this process may have added meanwhile is in :attr:`_owed`, so the
        second time its own claim or its own seen entry lets *request* through."""
        if self._is_start(request):
            unit = request.meta.get(meta._ROUND_UNIT)
            return self._claim_and_push(request) if unit is None else self._claim_unit(request, unit)
        if request.meta.get(meta._ROUND_UNIT) is not None:
            self._keep_local(request)
            return True
        owed = None
        if not request.dont_filter:
            owed = "seen:" + self.dupefilter.request_fingerprint(request)
            if self._seen(request, owed):
                self.stats.inc("filtered")
                return False
        self._push(request)
        if owed is not None:
            self._owed.discard(owed)
        return True

    def _claim_and_push(self, request: Request) -> bool:
        identity = self._identity(request)
        if not self._claim(request, identity):
            return False
        # Pushed with the mark, so that its retries and redirects (which copy the meta) are not
        # claimed again; a push that fails takes the mark back: the request is a start again
        # (held, then claimed again: its own claim lets it through).
        marked = request.meta.get(CLAIMED)
        request.meta[CLAIMED] = True
        try:
            self._push(request)
        except BaseException:
            if not marked:
                del request.meta[CLAIMED]
            raise
        self._owed.discard(identity)
        self._counts["claimed"] += 1
        self.stats.inc("claimed")
        return True

    @staticmethod
    def _is_start(request: Request) -> bool:
        return bool(request.meta.get("is_start_request")) and not request.meta.get(CLAIMED)

    def _claim_unit(self, request: Request, unit: str) -> bool:
        """A start request of *unit*: the unit's first claims it for the round (the URL claimed is
        that request's: every process reads the watchlist in one order); each is kept by this
        process if it has the unit, skipped if another does."""
        if unit not in self._units:
            identity = f"unit:{unit}"
            self._units[unit] = self._claim(request, identity)  # counts a skip (RedisError: held, then again)
            self._owed.discard(identity)  # nothing to push: the unit's requests stay here
            self.stats.inc("units_claimed" if self._units[unit] else "units_skipped")
            if self._units[unit] and request.meta.get(meta._ROUND_SHARES):
                self.sharing.begin(unit)
        elif not self._units[unit]:
            self._counts["skipped"] += 1
            self.stats.inc("skipped")
        if not self._units[unit]:
            return False
        request.meta[CLAIMED] = True  # its retries and redirects are the unit's, not new starts
        self._keep_local(request)
        self._counts["claimed"] += 1
        self.stats.inc("claimed")
        return True

    def shared(self, unit: str) -> None:
        """The spider has queued the requests *unit* makes for the whole round (a sitemap's
        pages): the round's idle processes need not wait for it any more."""
        if unit in self.sharing.units:
            self.sharing.done(unit)

    def first_to(self, decision: str, url: str) -> bool:
        """Whether this process is the round's first to make *decision* about *url* (or made it
        before): a decision every process of the round makes alike, such as a site watch's set not
        being due, is counted by one. When Redis does not answer, this process counts it (a count
        may then be doubled; no request depends on it)."""
        from redis.exceptions import RedisError

        identity = f"decided:{decision}"
        try:
            pipe = self.server.pipeline(transaction=False)
            pipe.hsetnx(self.keys.claims, identity, claim_value(url, self.owner))
            pipe.hget(self.keys.claims, identity)
            pipe.expire(self.keys.claims, self.ttl)
            added, value, _ = pipe.execute()
        except RedisError:
            return True
        return bool(added) or parse_claim(value)[1] == self.owner

    def _nudge_soon(self) -> None:
        """Have the engine ask for a request again in :data:`_WAIT_POLL` seconds: an idle engine
        asks only every 5 s (its heartbeat), by when the reader may have fetched its pages alone."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop (a test)
            return
        loop.call_later(_WAIT_POLL, self._nudge)

    def _nudge(self) -> None:
        slot = getattr(self.crawler.engine, "_slot", None)  # Scrapy 2.19's engine
        nextcall = getattr(slot, "nextcall", None)
        if nextcall is not None:
            nextcall.schedule()

    def _keep_local(self, request: Request) -> None:
        self._local.append(request)
        self.stats.inc("local_enqueued")

    def _claim(self, request: Request, identity: str) -> bool:
        """True when this process is the round's first to reach *request*'s watch, or claimed it
        earlier and has not pushed it yet (the claim's reply was lost, or its push failed)."""
        owed = identity in self._owed
        self._owed.add(identity)  # until pushed: the pipeline's reply may be lost
        pipe = self.server.pipeline(transaction=False)
        pipe.hsetnx(self.keys.claims, identity, claim_value(request.url, self.owner))
        pipe.hget(self.keys.claims, identity)
        pipe.expire(self.keys.claims, self.ttl)
        added, value, _ = pipe.execute()
        claimed_url, owner = parse_claim(value)
        if added or (owed and owner == self.owner and claimed_url == request.url):
            if not added:
                self.stats.inc("reclaimed")
            return True
        self._owed.discard(identity)
        if claimed_url != request.url:
            self._conflict(identity, request.url, claimed_url)
        else:
            self._counts["skipped"] += 1
            self.stats.inc("skipped")
        return False

    def _conflict(self, identity: str, url: str, claimed_url: str | None) -> None:
        self.stats.inc("conflicts")
        CrawlServices.of(self.crawler).fail(
            f"another job of spider {self.spider.name if self.spider else '?'!r} in round {self.round} claimed "
            f"{identity} for {claimed_url}, this one has it for {url}: jobs sharing a round must crawl one watchlist; "
            "give each watchlist its own CHANGEWATCH_ROUND or CHANGEWATCH_ROUND_PREFIX")

    def _seen(self, request: Request, owed: str) -> bool:
        """True when the round had seen *request* already (scrapy-redis's fingerprint), unless
        this process added it itself and has not pushed the request yet (*owed*: the reply was
        lost, or the push failed); the set's TTL is set with its first member, so a round whose
        processes are all killed leaks no key."""
        was_owed = owed in self._owed
        self._owed.add(owed)
        pipe = self.server.pipeline(transaction=False)
        pipe.sadd(self.keys.seen, owed.removeprefix("seen:"))
        pipe.expire(self.keys.seen, self.ttl)
        added, _ = pipe.execute()
        if added or was_owed:
            return False
        self._owed.discard(owed)
        return True

    def _push(self, request: Request) -> None:
        self.queue.push(request)
        # A TTL survives pushes but not the key's removal when the queue drains: set it again
        # now and then (and with the round's other keys), not on every push: seeding is one round
        # trip less a watch.
        if self._pushed % _EXPIRE_EVERY == 0:
            self.server.expire(self.keys.queue, self.ttl)
        self._pushed += 1
        self.stats.inc("enqueued")

    def _reseed(self) -> None:
        """Redis lost the round: claim every start request again (the other idle processes do
        the same; the claims let each through once). The marker is set again once every start is
        claimed or skipped: a reseed that Redis fails midway runs again (its own claims are
        skipped, an owed one is pushed)."""
        count = 0
        seen: set[str] = set()
        underway: set[str] = set()  # this process's units: claimed again, not begun again
        for request in self._starts:
            unit = request.meta.get(meta._ROUND_UNIT)
            if unit is not None and unit not in seen:
                seen.add(unit)
                if self._units.get(unit):
                    underway.add(unit)
                    self.server.hsetnx(self.keys.claims, f"unit:{unit}", claim_value(request.url, self.owner))
                else:
                    self._units.pop(unit, None)  # another process's before the loss: claimed afresh
            if unit in underway:
                continue
            if self._claim_and_push(request) if unit is None else self._claim_unit(request, unit):
                count += 1
                self._counts["reseeded"] += 1
                self.stats.inc("reseeded")
        self.server.set(self.keys.marker, self.owner, nx=True, ex=self.ttl)
        self.stats.inc("lost")
        logger.warning("round %s: Redis no longer held the round (flushed, evicted or expired): %d of this "
                       "process's %d watches claimed and queued again; a watch observed before the loss may be "
                       "fetched twice in this round, none is reported twice", self.round, count, len(self._starts))
