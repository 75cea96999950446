"""Several crawl processes, on one or more machines, sharing one watchlist in rounds: a
scrapy-redis queue per round, and each start request claimed once per round.

``SCHEDULER = "changewatch.distributed.RoundScheduler"`` (docs/distributed.md). Every process
of a round runs the same spider over the same watchlist; each start request (a watch) is
*claimed* in Redis by the first process to reach it, keyed by its ``changewatch_key`` (or its
fingerprint), and the others skip it. Claims live under the round's name, so the next round
claims every watch afresh: no dupefilter left over from the last round hides a watch. The
round's keys are never flushed by a process that closes (scrapy-redis's
``SCHEDULER_PERSIST=False`` would empty the queue of every other node): they expire
``CHANGEWATCH_ROUND_TTL`` after the round's last process closed or died. Every live process
refreshes all four together at least every quarter of the TTL (on its scheduler calls, and on a
timer for a process whose every download slot is taken), so a round may last any time.

A process closes when the shared queue is empty and its own requests are done; only a process
that is still busy can push (a retry, a redirect), and it then stays to pop. If Redis loses the
round (flushed, evicted, expired) an idle process notices the round's marker is gone and claims
its start requests again: a watch observed before the loss may be fetched twice that round, none
is skipped, and the store's change log still reports each change once.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import os
import socket
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scrapy import Request, Spider
from scrapy.crawler import Crawler
from scrapy.utils.misc import load_object

from . import meta
from .runtime.config import ChangewatchConfig, ConfigError
from .runtime.stats import Stats

if TYPE_CHECKING:
    from redis import Redis

__all__ = ["CLAIMED", "RoundKeys", "RoundScheduler", "round_name"]

logger = logging.getLogger(__name__)

#: private meta key: this request's start was claimed already; a retry or a redirect that copied
#: its meta is not a new start and must not be claimed (it would lose to its own claim)
CLAIMED = "_changewatch_round_claimed"
_DEFAULT_QUEUE = "scrapy_redis.queue.PriorityQueue"
_EXPIRE_EVERY = 64  # pushes between two EXPIREs of the queue key


def round_name(explicit: str | None, every: float | None, now: float) -> str:
    """The round a process started at *now* belongs to: *explicit* (``CHANGEWATCH_ROUND``), else
    the start of the round of length *every* (``CHANGEWATCH_ROUND_EVERY``) nearest to *now*, so
    that processes started by cron a little before or after the hour, on clocks a little apart,
    agree.

    >>> round_name(None, 900, 1_764_504_000 + 7)   # 7 s after 12:00 UTC
    '2025-11-30T12:00:00Z'
    >>> round_name(None, 900, 1_764_504_000 - 3)   # a clock 3 s early
    '2025-11-30T12:00:00Z'
    >>> round_name("nightly-42", 900, 0)
    'nightly-42'
    """
    if explicit:
        return explicit
    if every is None:
        raise ConfigError("CHANGEWATCH_ROUND = None: expected a round name (CHANGEWATCH_ROUND) or how often rounds "
                          "start (CHANGEWATCH_ROUND_EVERY, e.g. 15m): RoundScheduler shares work per round")
    start = round(now / every) * every
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(start))


@dataclass(frozen=True, slots=True)
class RoundKeys:
    """The Redis keys of one round of one spider."""

    queue: str  # the shared request queue (scrapy-redis)
    claims: str  # hash: start request identity -> the URL of the process that claimed it
    seen: str  # scrapy-redis dupefilter of the round's other requests (dont_filter=False)
    marker: str  # exists while Redis holds the round: gone means flushed, evicted or expired

    @classmethod
    def of(cls, prefix: str, spider: str, round_: str) -> RoundKeys:
        base = f"{prefix}:{spider}:{round_}"
        return cls(f"{base}:queue", f"{base}:claims", f"{base}:seen", f"{base}:marker")

    def all(self) -> tuple[str, ...]:
        return self.queue, self.claims, self.seen, self.marker


class RoundScheduler:
    """A Scrapy scheduler (``SCHEDULER``) over a scrapy-redis queue shared by every process of a
    round; start requests are claimed once per round (see the module docstring).

    Reads ``REDIS_URL`` (and scrapy-redis's ``REDIS_*`` connection settings),
    ``SCHEDULER_QUEUE_CLASS`` and ``SCHEDULER_SERIALIZER``; not ``SCHEDULER_PERSIST``,
    ``SCHEDULER_FLUSH_ON_START``, ``DUPEFILTER_CLASS`` or the key settings: a round's keys are
    named by ``CHANGEWATCH_ROUND_PREFIX``, the spider and the round, and expire
    ``CHANGEWATCH_ROUND_TTL`` after the round's last process stopped refreshing them."""

    def __init__(self, crawler: Crawler, server: Redis, round_: str, prefix: str, ttl: float):
        self.crawler = crawler
        self.server = server
        self.round = round_
        self.prefix = prefix
        self.ttl = max(1, int(ttl))
        self.stats = Stats(crawler, "round")
        self.keys: RoundKeys
        self.queue: Any = None
        self.dupefilter: Any = None
        self.spider: Spider | None = None
        self._starts: list[Request] = []  # every start request offered, to claim again after a loss
        self._counts = {"claimed": 0, "skipped": 0, "reseeded": 0, "dequeued": 0}
        self._pushed = 0
        self._refreshed = float("-inf")  # time.monotonic() of this process's last refresh of the keys
        self._timer: asyncio.TimerHandle | None = None
        self.owner = f"{socket.gethostname()}:{os.getpid()}"

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RoundScheduler:
        from scrapy_redis.connection import get_redis_from_settings

        config = ChangewatchConfig.from_settings(crawler.settings)
        round_ = round_name(config.round, config.round_every, time.time())
        server = get_redis_from_settings(crawler.settings)
        ttl = config.round_ttl
        if not config.round and config.round_every:
            # A process joins the round nearest its start: up to half an interval after the round
            # began, maybe after it ended. Its claims must still be there, or it runs it again.
            ttl = max(ttl, config.round_every / 2)
        return cls(crawler, server, round_, config.round_prefix, ttl)

    # -- the BaseScheduler interface -------------------------------------------------------

    def open(self, spider: Spider) -> None:
        from scrapy_redis.dupefilter import RFPDupeFilter

        self.spider = spider
        self.keys = RoundKeys.of(self.prefix, spider.name, self.round)
        settings = self.crawler.settings
        queue_cls = load_object(settings.get("SCHEDULER_QUEUE_CLASS") or _DEFAULT_QUEUE)
        serializer = settings.get("SCHEDULER_SERIALIZER")
        if isinstance(serializer, str):  # a module with loads and dumps, as scrapy-redis takes it
            serializer = importlib.import_module(serializer)
        self.queue = queue_cls(server=self.server, spider=spider, key=self.keys.queue, serializer=serializer)
        self.dupefilter = RFPDupeFilter(self.server, key=self.keys.seen, debug=settings.getbool("DUPEFILTER_DEBUG"))
        opened = self.server.set(self.keys.marker, self.owner, nx=True, ex=self.ttl)
        self._refresh()
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop (a test): the scheduler's own calls refresh the keys
            pass
        else:
            self._timer = loop.call_later(self.ttl / 4, self._tick)
        waiting = len(self.queue)
        logger.info("round %s of spider %r: %s (Redis keys %s:*, kept %d s after its last process; %d requests "
                    "waiting)", self.round, spider.name, "opened by this process" if opened else "joined",
                    self.keys.queue.rsplit(":", 1)[0], self.ttl, waiting)

    def close(self, reason: str) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        # Never flush: the other processes of the round still use its keys; they expire.
        self._refresh()
        logger.info("round %s: this process claimed %d watches, left %d to others, claimed %d again after Redis "
                    "lost the round", self.round, self._counts["claimed"], self._counts["skipped"],
                    self._counts["reseeded"])
        starts, counts = len(self._starts), self._counts
        if starts and counts["skipped"] == starts and not counts["reseeded"] and not counts["dequeued"]:
            self.stats.inc("all_claimed")
            logger.warning("round %s: all %d of this process's watches were claimed already in this round and it "
                           "fetched nothing: the round ran (or its other processes drained it) before this process "
                           "started. A round's name stays taken for CHANGEWATCH_ROUND_TTL (%d s) after its last "
                           "process; to fetch the watchlist again, use a new round name (CHANGEWATCH_ROUND) or "
                           "wait that long", self.round, starts, self.ttl)

    def has_pending_requests(self) -> bool:
        # The engine asks only when this process is otherwise idle (its start requests read,
        # nothing downloading or being scraped): the moment to check the round is intact.
        self._keep()
        if len(self.queue) > 0:
            return True
        if self.server.exists(self.keys.marker):
            return False
        self._reseed()
        return len(self.queue) > 0

    def enqueue_request(self, request: Request) -> bool:
        self._keep()
        if request.meta.get("is_start_request") and not request.meta.get(CLAIMED):
            self._starts.append(request)
            if not self._claim(request):
                return False
        elif not request.dont_filter and self._seen(request):
            self.stats.inc("filtered")
            return False
        self._push(request)
        return True

    def next_request(self) -> Request | None:
        self._keep()
        request: Request | None = self.queue.pop()
        if request is not None:
            self._counts["dequeued"] += 1
            self.stats.inc("dequeued")
        return request

    def __len__(self) -> int:
        return len(self.queue)

    # -- claims ----------------------------------------------------------------------------

    def _identity(self, request: Request) -> str:
        key = request.meta.get(meta.KEY)
        if key is not None:
            return f"key:{key}"
        assert self.crawler.request_fingerprinter is not None
        return "fp:" + self.crawler.request_fingerprinter.fingerprint(request).hex()

    def _claim(self, request: Request) -> bool:
        """True when this process is the round's first to reach *request*'s watch."""
        identity = self._identity(request)
        pipe = self.server.pipeline(transaction=False)
        pipe.hsetnx(self.keys.claims, identity, request.url)
        pipe.hget(self.keys.claims, identity)
        pipe.expire(self.keys.claims, self.ttl)
        added, claimed_url, _ = pipe.execute()
        if added:
            self._counts["claimed"] += 1
            self.stats.inc("claimed")
            return True
        if isinstance(claimed_url, bytes):
            claimed_url = claimed_url.decode("utf-8", "replace")
        if claimed_url != request.url:
            self._conflict(identity, request.url, claimed_url)
        else:
            self._counts["skipped"] += 1
            self.stats.inc("skipped")
        return False

    def _conflict(self, identity: str, url: str, claimed_url: str | None) -> None:
        from .runtime.extension import ChangewatchRuntime

        self.stats.inc("conflicts")
        ChangewatchRuntime.of(self.crawler).fail(
            f"another job of spider {self.spider.name if self.spider else '?'!r} in round {self.round} claimed "
            f"{identity} for {claimed_url}, this one has it for {url}: jobs sharing a round must crawl one watchlist; "
            "give each watchlist its own CHANGEWATCH_ROUND or CHANGEWATCH_ROUND_PREFIX")

    def _seen(self, request: Request) -> bool:
        """True when the round had seen *request* already (scrapy-redis's fingerprint); the set's
        TTL is set with its first member, so a round whose processes are all killed leaks no key."""
        pipe = self.server.pipeline(transaction=False)
        pipe.sadd(self.keys.seen, self.dupefilter.request_fingerprint(request))
        pipe.expire(self.keys.seen, self.ttl)
        added, _ = pipe.execute()
        return not added

    def _push(self, request: Request) -> None:
        if request.meta.get("is_start_request"):
            request.meta[CLAIMED] = True
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
        the same; the claims let each through once)."""
        self.stats.inc("lost")
        self.server.set(self.keys.marker, self.owner, nx=True, ex=self.ttl)
        count = 0
        for request in self._starts:
            if self._claim(request):
                self._push(request)
                count += 1
        self._counts["reseeded"] += count
        self.stats.inc("reseeded", count)
        logger.warning("round %s: Redis no longer held the round (flushed, evicted or expired): %d of this "
                       "process's %d watches claimed and queued again; a watch observed before the loss may be "
                       "fetched twice in this round, none is reported twice", self.round, count, len(self._starts))

    # -- keeping the round's keys while it runs -------------------------------------------------

    def _keep(self) -> None:
        """Refresh the round's keys if this process has not for a quarter of their TTL: a clock
        read on most scheduler calls, one pipelined round trip a few times a TTL."""
        if time.monotonic() - self._refreshed >= self.ttl / 4:
            self._refresh()

    def _tick(self) -> None:
        """The timer: a process whose every download slot is taken asks its scheduler nothing
        for as long as a download may take, which can be longer than the TTL."""
        from redis.exceptions import RedisError

        try:
            self._keep()
        except RedisError as exc:  # the next scheduler call that needs Redis reports it
            logger.warning("round %s: could not refresh the round's Redis keys: %s", self.round, exc)
        self._timer = asyncio.get_running_loop().call_later(self.ttl / 4, self._tick)

    def _refresh(self) -> None:
        """EXPIRE every key of the round: the marker, the claims, the queue and the seen set live
        while any process of the round does. A key that is gone stays gone (a lost marker is how
        an idle process learns Redis lost the round)."""
        pipe = self.server.pipeline(transaction=False)
        for key in self.keys.all():
            pipe.expire(key, self.ttl)
        pipe.execute()
        self._refreshed = time.monotonic()
