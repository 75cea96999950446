"""The round's scheduler: the Scrapy side of a round (see the package docstring)."""
from __future__ import annotations

import asyncio
import importlib
import logging
import os
import secrets
import socket
import time
from collections import deque
from typing import TYPE_CHECKING, Any

from scrapy import Request, Spider
from scrapy.crawler import Crawler
from scrapy.utils.misc import load_object

from .. import meta
from ..config import ChangewatchConfig
from ..runtime.stats import Stats
from ..store.outage import Outage
from .claims import Claims
from .connection import is_redis_error, redis_server
from .keys import CLAIMED, RoundKeys, round_name
from .outages import Outages
from .sharing import SharedWork

if TYPE_CHECKING:
    from redis import Redis

__all__ = ["RoundScheduler", "round_scheduler"]

logger = logging.getLogger("changewatch.distributed")

_DEFAULT_QUEUE = "scrapy_redis.queue.PriorityQueue"
_RETRY_FIRST = 0.5  # seconds between two tries of an unreachable Redis, doubling...
_RETRY_MAX = 5.0  # ...up to the engine's heartbeat, which asks an idle process every 5 s


def round_scheduler(crawler: Crawler) -> RoundScheduler | None:
    """The crawl's RoundScheduler, when it has one (None outside a round, or before the engine)."""
    try:
        engine = crawler.engine
    except RuntimeError:  # Scrapy 2.19: not set yet
        return None
    # not `a or b`: a scheduler with nothing queued is falsy (its __len__)
    for scheduler in (getattr(engine, "scheduler", None), getattr(getattr(engine, "_slot", None), "scheduler", None)):
        if isinstance(scheduler, RoundScheduler):
            return scheduler
    return None


class RoundScheduler(Claims, Outages):
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
        self._outage = Outage(retry_time, is_redis_error, first_delay=_RETRY_FIRST, max_delay=_RETRY_MAX)
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
