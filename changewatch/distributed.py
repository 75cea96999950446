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
refreshes all its keys together at least every quarter of the TTL (on its scheduler calls, and on a
timer for a process whose every download slot is taken), so a round may last any time.

A process closes when the shared queue is empty and its own requests are done; only a process
that is still busy can push (a retry, a redirect), and it then stays to pop. If Redis loses the
round (flushed, evicted, expired) an idle process notices the round's marker is gone and claims
its start requests again: a watch observed before the loss may be fetched twice that round, none
is skipped, and the store's change log still reports each change once.

Redis may also stop answering mid-round (restarted, failed over, cut off). The scheduler never
waits for it on the crawl's event loop: it counts the outage from its first error, and meanwhile
pops nothing, keeps the requests it is given, says it has work pending (so the engine keeps
asking) and tries Redis again every few seconds. When Redis answers it claims and pushes what it
kept (and re-seeds the round if Redis came back empty); past ``CHANGEWATCH_ROUND_RETRY_TIME`` it
stops the crawl, non-zero. A claim or a push whose reply was lost may or may not have been applied:
a claim records its process, so a process that finds its own claim on a watch it still owes the
queue pushes it (a duplicate push, at worst a watch fetched twice, is preferred to a miss).

Some work is done whole by one process: a site watch's discovery (its sitemap read and judged,
or its links followed), whose callbacks are not the spider's methods and whose state lives in the
process that began it. Its requests carry a *unit* (``meta._ROUND_UNIT``, the site watch's key):
the unit is claimed once per round with its first start request, and the requests of a unit this
process claimed stay in this process's own queue, never pushed to Redis. The page requests a
sitemap's discovery makes are ordinary requests, shared by the round; while a process still reads
a sitemap, the round's idle processes wait for its pages (:mod:`changewatch.round_sharing`).
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import os
import secrets
import socket
import time
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scrapy import Request, Spider
from scrapy.crawler import Crawler
from scrapy.utils.misc import load_object

from . import meta
from .config import ChangewatchConfig, ConfigError
from .round_sharing import SharedWork
from .runtime.services import CrawlServices
from .runtime.stats import Stats
from .store.outage import Outage

if TYPE_CHECKING:
    from redis import Redis
    from scrapy.settings import BaseSettings

__all__ = ["CLAIMED", "RoundKeys", "RoundScheduler", "round_name", "round_scheduler"]

logger = logging.getLogger(__name__)

#: private meta key: this request's start was claimed already; a retry or a redirect that copied
#: its meta is not a new start and must not be claimed (it would lose to its own claim)
CLAIMED = "_changewatch_round_claimed"
_DEFAULT_QUEUE = "scrapy_redis.queue.PriorityQueue"
_EXPIRE_EVERY = 64  # pushes between two EXPIREs of the queue key
_RETRY_FIRST = 0.5  # seconds between two tries of an unreachable Redis, doubling...
_RETRY_MAX = 5.0  # ...up to the engine's heartbeat, which asks an idle process every 5 s
_WAIT_POLL = 0.5  # seconds between two looks at the queue while another process reads a sitemap
#: Redis connection defaults where ``REDIS_PARAMS`` sets none: every Redis call runs on the crawl's
#: event loop, which a call blocks until it returns. scrapy-redis's 30 s socket timeouts (and
#: redis-py's default of 10 retries with backoff) would freeze the crawl that long on every call to a
#: black-holed server. A refused or reset connection is retried once, at once (a restarted server);
#: a timeout is not retried.
REDIS_SOCKET_TIMEOUT = 5.0
REDIS_CONNECT_TIMEOUT = 3.0


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
    claims: str  # hash: start request identity -> "<URL> <owner>": the watch's URL and the process that claimed it
    seen: str  # scrapy-redis dupefilter of the round's other requests (dont_filter=False)
    marker: str  # exists while Redis holds the round: gone means flushed, evicted or expired
    notes: str  # set: what a process noted for the others of the round (RoundScheduler.note)
    busy: str  # set: the processes still preparing work for the round (changewatch.round_sharing)

    @classmethod
    def of(cls, prefix: str, spider: str, round_: str) -> RoundKeys:
        base = f"{prefix}:{spider}:{round_}"
        return cls(f"{base}:queue", f"{base}:claims", f"{base}:seen", f"{base}:marker", f"{base}:notes",
                   f"{base}:busy")

    def all(self) -> tuple[str, ...]:
        return self.queue, self.claims, self.seen, self.marker, self.notes, self.busy


def claim_value(url: str, owner: str) -> str:
    """A claim's value in the round's claims hash: the URL claimed (another watchlist claiming the
    key for another URL is a conflict) and the process that claimed it (its own claim, found again
    after the reply was lost, is still its own). A URL has no space in it (Scrapy escapes them)."""
    return f"{url} {owner}"


def parse_claim(value: bytes | str | None) -> tuple[str | None, str | None]:
    """(URL, owner) of a claim's value; a value without an owner is a URL alone."""
    if value is None:
        return None, None
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    url, space, owner = value.rpartition(" ")
    return (url, owner) if space else (value, None)


def redis_server(settings: BaseSettings) -> Redis:
    """The Redis client scrapy-redis's ``get_redis_from_settings`` would make, with
    :data:`REDIS_SOCKET_TIMEOUT`, :data:`REDIS_CONNECT_TIMEOUT` and one immediate retry of a
    refused or reset connection (no retry of a timeout) where ``REDIS_PARAMS`` says nothing of them."""
    from redis.backoff import NoBackoff
    from redis.exceptions import ConnectionError as RedisConnectionError
    from redis.retry import Retry
    from scrapy_redis import defaults
    from scrapy_redis.connection import SETTINGS_PARAMS_MAP, get_redis

    given = settings.getdict("REDIS_PARAMS")
    params = {k: v for k, v in defaults.REDIS_PARAMS.items() if k not in ("socket_timeout", "socket_connect_timeout")}
    params.update(socket_timeout=REDIS_SOCKET_TIMEOUT, socket_connect_timeout=REDIS_CONNECT_TIMEOUT)
    if not {"retry", "retry_on_timeout", "retry_on_error"} & set(given):
        params.pop("retry_on_timeout", None)
        params["retry"] = Retry(NoBackoff(), 1, (RedisConnectionError,))
    params.update(given)
    for source, dest in SETTINGS_PARAMS_MAP.items():
        value = settings.get(source)
        if value:
            params[dest] = value
    if isinstance(params.get("redis_cls"), str):
        params["redis_cls"] = load_object(params["redis_cls"])
    server: Redis = get_redis(**params)
    return server


def _is_redis_error(exc: BaseException) -> bool:
    """Every error of a Redis call is an outage to ride out: the scheduler's calls cannot be wrong
    in a way that trying again would not show."""
    from redis.exceptions import RedisError

    return isinstance(exc, RedisError)


def _where(server: Redis) -> str:
    """Where *server* is, for a message: host:port/db (or its socket), never its password."""
    kwargs = server.connection_pool.connection_kwargs
    place = kwargs.get("path") or f"{kwargs.get('host', 'localhost')}:{kwargs.get('port', 6379)}"
    return f"{place}/{kwargs.get('db', 0)}"


def round_scheduler(crawler: Crawler) -> RoundScheduler | None:
    """The crawl's RoundScheduler, when it has one (None outside a round, or before the engine)."""
    engine = getattr(crawler, "engine", None)
    scheduler = getattr(engine, "scheduler", None) or getattr(getattr(engine, "_slot", None), "scheduler", None)
    return scheduler if isinstance(scheduler, RoundScheduler) else None


class RoundScheduler:
    """A Scrapy scheduler (``SCHEDULER``) over a scrapy-redis queue shared by every process of a
    round; start requests are claimed once per round (see the module docstring).

    Reads ``REDIS_URL`` (and scrapy-redis's ``REDIS_*`` connection settings),
    ``SCHEDULER_QUEUE_CLASS`` and ``SCHEDULER_SERIALIZER``; not ``SCHEDULER_PERSIST``,
    ``SCHEDULER_FLUSH_ON_START``, ``DUPEFILTER_CLASS`` or the key settings: a round's keys are
    named by ``CHANGEWATCH_ROUND_PREFIX``, the spider and the round, and expire
    ``CHANGEWATCH_ROUND_TTL`` after the round's last process stopped refreshing them. An outage of
    Redis may last ``CHANGEWATCH_ROUND_RETRY_TIME`` (*retry_time*) before the crawl stops."""

    def __init__(self, crawler: Crawler, server: Redis, round_: str, prefix: str, ttl: float,
                 retry_time: float = 60.0):
        self.crawler = crawler
        self.server = server
        self.round = round_
        self.prefix = prefix
        self.ttl = max(1, int(ttl))
        self.stats = Stats(crawler, "round")
        self.keys: RoundKeys
        self.queue: Any = None
        self.dupefilter: Any = None
        self.sharing: SharedWork
        self.spider: Spider | None = None
        self._starts: list[Request] = []  # every start request offered, to claim again after a loss
        #: units (see the module docstring): claimed by this process (True) or by another (False);
        #: and the requests of this process's units, fetched by this process only
        self._units: dict[str, bool] = {}
        self._local: deque[Request] = deque()
        self._counts = {"claimed": 0, "skipped": 0, "reseeded": 0, "dequeued": 0}
        self._pushed = 0
        self._refreshed = float("-inf")  # time.monotonic() of this process's last refresh of the keys
        self._timer: asyncio.TimerHandle | None = None
        # which process claimed a watch: unique even for containers that share a host name and a pid
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"
        # Redis outages (see the module docstring)
        self.retry_time = retry_time
        self._outage = Outage(retry_time, _is_redis_error, first_delay=_RETRY_FIRST, max_delay=_RETRY_MAX)
        self._last_error = ""
        self._held: list[Request] = []  # requests enqueued during the outage: enqueued when Redis answers
        #: starts claimed, or maybe claimed (the reply was lost), and not pushed yet, by identity; and
        #: other requests added to the round's seen set, or maybe, and not pushed yet ("seen:" + fingerprint)
        self._owed: set[str] = set()
        self._budget: asyncio.TimerHandle | None = None
        self._gave_up = False

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RoundScheduler:
        config = ChangewatchConfig.from_settings(crawler.settings)
        round_ = round_name(config.round, config.round_every, time.time())
        server = redis_server(crawler.settings)
        ttl = config.round_ttl
        if not config.round and config.round_every:
            # A process joins the round nearest its start: up to half an interval after the round
            # began, maybe after it ended. Its claims must still be there, or it runs it again.
            ttl = max(ttl, config.round_every / 2)
        return cls(crawler, server, round_, config.round_prefix, ttl, config.round_retry_time)

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
        self.sharing = SharedWork(self.server, self.keys.busy, self.owner, self.ttl)
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
        from redis.exceptions import RedisError

        for timer in (self._timer, self._budget):
            if timer is not None:
                timer.cancel()
        self._timer = self._budget = None
        if self.sharing.units:
            self.sharing.done()
        # Never flush: the other processes of the round still use its keys; they expire.
        if self._outage.since is None:
            try:
                self._refresh()
            except RedisError as exc:  # closing: nothing left to keep the round for
                logger.warning("round %s: could not refresh the round's Redis keys at close: %s", self.round, exc)
        if self._held and not self._gave_up:  # (when it gave up, its CRITICAL line said so)
            logger.warning("round %s: %d requests this process made while Redis was unreachable were never queued: "
                           "they are not fetched in this round (the next round fetches every watch)", self.round,
                           len(self._held))
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
        # nothing downloading or being scraped): the moment to check the round is intact. While
        # Redis is unreachable (and within its budget) there is work pending: the engine keeps
        # asking, every heartbeat, until Redis answers.
        from redis.exceptions import RedisError

        if self._local:
            return True
        try:
            if self._unreachable():
                return not self._gave_up
            self._keep()
            if self.sharing.units:  # idle: every callback done, so the pages its units make are queued
                self.sharing.done()
            if len(self.queue) > 0:
                self._nudge_soon()  # queued since this idle engine last asked: it would ask again in 5 s
                return True
            if self.server.exists(self.keys.marker):
                if not self.sharing.others():
                    return False
                self._nudge_soon()  # stay while another process still queues pages, and look often
                return True
            self._reseed()
            return bool(self._local) or len(self.queue) > 0
        except RedisError as exc:
            self._redis_failed(exc)
            return not self._gave_up

    def enqueue_request(self, request: Request) -> bool:
        from redis.exceptions import RedisError

        if request.meta.get("is_start_request") and not request.meta.get(CLAIMED):
            self._starts.append(request)
        if self._gave_up:  # the crawl is stopping
            return False
        if request.meta.get(meta._ROUND_UNIT) is not None and not self._is_start(request):
            self._keep_local(request)  # a unit this process claimed: Redis is not asked
            return True
        try:
            if not self._unreachable():
                self._keep()
                return self._enqueue(request)
        except RedisError as exc:
            self._redis_failed(exc)
        if self._gave_up:
            return False
        self._held.append(request)  # claimed (or filtered) and pushed when Redis answers
        self.stats.inc("held")
        return True

    def next_request(self) -> Request | None:
        from redis.exceptions import RedisError

        if self._local:
            self.stats.inc("local_dequeued")
            return self._local.popleft()
        try:
            if self._unreachable():
                return None
            self._keep()
            # A pop whose reply is lost may have taken the request from the queue: it is not
            # fetched in this round (as a request popped by a process that is killed).
            request: Request | None = self.queue.pop()
        except RedisError as exc:
            self._redis_failed(exc)
            return None
        if request is not None:
            self._counts["dequeued"] += 1
            self.stats.inc("dequeued")
        return request

    def __len__(self) -> int:
        from redis.exceptions import RedisError

        if self._outage.since is not None:
            return len(self._held) + len(self._local)
        try:
            return len(self.queue) + len(self._held) + len(self._local)
        except RedisError:
            return len(self._held) + len(self._local)

    # -- claims ----------------------------------------------------------------------------

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

    # -- notes shared by the round's processes -------------------------------------------------

    def note(self, name: str) -> None:
        """Tell the round's other processes *name* (:meth:`noted`). A note Redis does not take is
        logged: the caller treats a note it cannot read as taken."""
        from redis.exceptions import RedisError

        try:
            pipe = self.server.pipeline(transaction=False)
            pipe.sadd(self.keys.notes, name)
            pipe.expire(self.keys.notes, self.ttl)
            pipe.execute()
        except RedisError as exc:
            logger.warning("round %s: could not note %r in Redis: %s", self.round, name, exc)

    def noted(self, name: str) -> bool:
        """Whether a process of the round noted *name*; True when Redis cannot say (the cautious
        answer)."""
        from redis.exceptions import RedisError

        if self._outage.since is not None:
            return True
        try:
            return bool(self.server.sismember(self.keys.notes, name))
        except RedisError:
            return True

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
            if not self._unreachable():
                self._keep()
        except RedisError as exc:
            self._redis_failed(exc)
        if not self._gave_up:
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

    # -- Redis outages -------------------------------------------------------------------------

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
                           "CHANGEWATCH_ROUND_RETRY_TIME (%g s)", self.round, _where(self.server), self._last_error,
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
                       "meanwhile are queued now%s", self.round, _where(self.server), down, errors, replayed,
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
            f"Redis at {_where(self.server)} unreachable for more than {self.retry_time:g} s "
            f"(CHANGEWATCH_ROUND_RETRY_TIME) in round {self.round}: {self._last_error}; the {len(self._held)} requests "
            "this process made meanwhile and the watches left in the round's queue are fetched in the next round")
