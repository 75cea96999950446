"""``CrawlServices``: what every changewatch component of a crawl shares, found with
``crawler.get_extension(CrawlServices)`` (:meth:`CrawlServices.of`): the settings parsed once,
the store (through its runner), the comparisons, the worker pool, which response each item came
from, this process's lease on the changes it exports, and a way to stop the crawl (:meth:`fail`).
A store that cannot be written mid-crawl stops the crawl and the process exits non-zero.

The extension that builds it and composes the features (``changewatch.addon.ChangewatchRuntime``)
subclasses it; nothing here imports a feature.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, Protocol
from urllib.parse import urlsplit

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.exceptions import CloseSpider

from ..config import BadValue, ChangewatchConfig, ConfigError
from ..config.parsers import Bool
from ..core.comparisons import Comparison
from ..core.diff import DiffOptions
from ..store import RoutingStore, StoreError
from ..store.leases import new_owner
from ..store.records import Lease
from ..store.runner import StoreRunner, spider_name
from .fetches import FetchOutcomes
from .housekeeping import Housekeeper
from .learning import LearningError, parse_calibrate, parse_forget
from .origins import ItemRequests, ResponseOrigins, ServedHeaders
from .shutdown import ForcedShutdown
from .spider import spider_options
from .stats import Stats
from .sweep import start_sweep
from .workers import WorkerPool

if TYPE_CHECKING:
    from twisted.internet.task import LoopingCall

    from ..core.observation import Observation

__all__ = ["Commits", "CrawlServices", "FollowUps", "origin_of"]

logger = logging.getLogger(__name__)


def origin_of(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    return parts.scheme.lower(), (parts.hostname or "").lower(), parts.port


class Commits(Protocol):
    """What a commit tells the health check (changewatch.health.activity.Activity)."""

    def committed(self, key: str, url: str, observed_at: str, canary: Any = None) -> None:
        """One observation of *key* committed, fetched at *observed_at* as stored."""


class NoCommits:
    """A crawl without the health check."""

    def committed(self, key: str, url: str, observed_at: str, canary: Any = None) -> None:
        return None


class FollowUps(Protocol):
    """What happens after a commit (notifications: changewatch.notify.crawl.CrawlNotifications)."""

    def prepare(self) -> str | None:
        """Why the crawl cannot follow up on its changes (None: it can); called as the store opens."""

    def targets(self, obs: Observation, record: dict[str, Any] | None) -> tuple[tuple[str, str], ...]:
        """The destinations (id, shown) of a change about to be committed (it may add to *record*
        what decided them: the record is logged after this)."""

    def committed(self, outcome_notify: tuple[tuple[str, str], ...]) -> None:
        """Count what a commit wrote."""


class NoFollowUps:
    """A crawl without notifications."""

    def prepare(self) -> str | None:
        return None

    def targets(self, obs: Observation, record: dict[str, Any] | None) -> tuple[tuple[str, str], ...]:
        return ()

    def committed(self, outcome_notify: tuple[tuple[str, str], ...]) -> None:
        return None


class CrawlServices:
    """The per-crawl services (an extension; the add-on enables its subclass). Components call :meth:`of`."""

    def __init__(self, crawler: Crawler, config: ChangewatchConfig, runner: StoreRunner,
                 comparisons: Sequence[Comparison]):
        self.crawler = crawler
        self.config = config
        self.runner = runner
        self.comparisons = tuple(comparisons)
        #: their table, as plain data: it travels to the workers with every task
        self.comparison_table = dict(config.comparisons)
        self.pool = WorkerPool(config.workers, task_timeout=config.worker_timeout)
        self.origins = ResponseOrigins()
        #: the request each item's response answered (-a calibrate=N repeats it)
        self.requests = ItemRequests()
        #: each response's header lines as served (the download handler notes them), for evidence
        self.served_headers = ServedHeaders()
        #: what became of the spider's requests: a crawl that observed nothing says why
        self.fetches = FetchOutcomes()
        self.lease = Lease(new_owner(), config.delivery_lease)
        self.diff = DiffOptions(context=config.diff_context, max_lines=config.diff_max_lines)
        self.stats = Stats(crawler, "runtime")
        self.failure: str | None = None
        #: why the crawl exits non-zero though it ran to its end (:meth:`failed_at_end`)
        self.failed_late: str | None = None
        self._closing: asyncio.Future[None] | None = None
        self._open = False
        self.trusted_origins: set[tuple[str, str, int | None]] = set()
        self._retries_counted = 0
        #: what this process committed, for the health check, and what follows a commit
        #: (notifications): the features' own, which the composing extension sets
        self.activity: Commits = NoCommits()
        self.notifications: FollowUps = NoFollowUps()
        #: ``-a force=1``: fetch every watch, due or not (read when the crawl opens)
        self.force = False
        self.housekeeper = Housekeeper(self)
        self._sweep: LoopingCall | None = None
        self._forced: ForcedShutdown | None = None

    def connect(self) -> None:
        signal_manager = self.crawler.signals
        signal_manager.connect(self._engine_stopped, signal=signals.engine_stopped)
        signal_manager.connect(self._spider_opened, signal=signals.spider_opened)
        signal_manager.connect(self._spider_closed, signal=signals.spider_closed)
        signal_manager.connect(self.housekeeper.closed, signal=signals.spider_closed)

    @classmethod
    def of(cls, crawler: Crawler) -> CrawlServices:
        """The crawler's services; ConfigError when a component was enabled without them."""
        services = crawler.get_extension(cls)
        if services is None:
            ChangewatchConfig.from_settings(crawler.settings)  # a bad value is the first thing to say
            raise ConfigError("changewatch components need the changewatch.addon.ChangewatchRuntime extension: "
                              "enable changewatch.Addon in ADDONS (it adds it), or add the extension to EXTENSIONS")
        return services

    def trusts(self, url: str) -> bool:
        return bool(self.trusted_origins) and origin_of(url) in self.trusted_origins

    @property
    def is_open(self) -> bool:
        return self._open

    async def open(self) -> None:
        """Open the store (the comparison step does, before anything else needs it; others may
        call it too). It stays open until the engine stops: feeds confirm their changes after
        the spider closed.

        A store that cannot be opened (its server is down, its file is not a store) stops the
        crawl before anything is fetched: one CRITICAL line, then CloseSpider, which Scrapy lets
        a component raise while the spider opens; the process exits non-zero. A StoreError let
        out of here reached the user as an asyncio "Task exception was never retrieved"
        traceback instead. So does a spider whose ``changewatch_cannot_start`` says why it
        cannot (it has logged that itself), before the store is opened."""
        if self._open:
            return
        if self.failure is not None:
            raise CloseSpider("changewatch_failed")
        cannot_start = (spider_options(self.crawler.spider).cannot_start or self._read_force()
                        or self._check_learning())
        if cannot_start:
            # The spider has said why, once (the watch spider: its watchlist is invalid); a spider
            # that raised from from_crawler instead came out as asyncio's "Task exception was never
            # retrieved" traceback. Stopped here, before the store is touched: exit status 1.
            self.failure = str(cannot_start)
            self.stats.inc("failed")
            raise CloseSpider("changewatch_failed")
        if why := self._cannot_follow_up():
            self.failure = why
            self.stats.inc("failed")
            logger.critical("changewatch: stopping the crawl: %s", why)
            raise CloseSpider("changewatch_failed")
        try:
            await self.runner.acquire()
        except StoreError as exc:
            self.failure = f"the store cannot be opened: {exc}"
            self.stats.inc("failed")
            logger.critical("changewatch: stopping the crawl: %s", self.failure)
            raise CloseSpider("changewatch_failed") from None
        self._open = True
        if created := getattr(self.runner.store, "created", None):  # a relative path, from another folder?
            logger.warning("changewatch: created a new store %s: the first observation of each page in it is a "
                           "silent baseline", created)

    async def cannot_start(self, why: str) -> NoReturn:
        """Stop the crawl before anything is fetched, for a bad argument only the open store can
        tell (``-a forget=`` a key it holds nothing of): one ERROR line, the store released, exit
        status 1, as for a bad argument found before it opened."""
        logger.error("changewatch: the crawl cannot start: %s", why)
        self.failure = why
        self.stats.inc("failed")
        if self._open:
            self._open = False
            await self.runner.release()
        raise CloseSpider("changewatch_failed")

    def _cannot_follow_up(self) -> str | None:
        """Why the store cannot serve the notifications or summaries configured (None: it can)."""
        if why := self.notifications.prepare():
            return why
        if self.config.summaries and not isinstance(self.runner.store, RoutingStore):
            return (f"the store {self.runner.store!r} cannot keep summaries: its backend does not implement "
                    "changewatch.store.RoutingStore (CHANGEWATCH_SUMMARY_URL is set)")
        return None

    def exit_nonzero(self, why: str) -> None:
        """Make the crawl exit non-zero once it has ended, for a failure already logged (a
        notification that could not be sent) that does not stop it."""
        if self.failure is None:
            self.failure = why
            self.stats.inc("failed")

    def failed_at_end(self, why: str) -> None:
        """Make the crawl exit non-zero for a failure found as the spider closes (its due watches
        all failed), said by the caller, without stopping what still runs after it: the
        notifications of those failures, housekeeping."""
        if self.failure is None and self.failed_late is None:
            self.failed_late = why
            self.stats.inc("failed")

    def _check_learning(self) -> str | None:
        """Why the spider's ``-a calibrate=`` or ``-a forget=`` cannot be used (None: they can), said
        once here for any spider (a ChangewatchSpider parsed them already): raised later, from the
        pipeline's opening, it came out as asyncio's "Task exception was never retrieved"."""
        spider = self.crawler.spider
        options = spider_options(spider)
        try:
            if options.calibrate is None:
                parse_calibrate(getattr(spider, "calibrate", None))
            if options.forget is None:
                parse_forget(getattr(spider, "forget", None))
        except LearningError as exc:
            logger.error("changewatch: the crawl cannot start: %s", exc)
            return str(exc)
        return None

    def _read_force(self) -> str | None:
        """Read the spider's ``-a force=`` into :attr:`force`; why the crawl cannot start, for a bad value."""
        value = getattr(self.crawler.spider, "force", None)
        if value is None:
            return None
        try:
            self.force = bool(Bool()(value))
        except BadValue:
            why = f"-a force={value!r}: expected 1 (fetch every watch, due or not) or 0 (also true, false)"
            logger.error("changewatch: %s", why)
            return why
        return None

    @property
    def spider(self) -> str:
        """The store's namespace for this crawl."""
        return spider_name(self.crawler)

    async def write(self, fn: Callable[..., object], *args: Any) -> bool:
        """Call the store's *fn* for the crawl's own bookkeeping (claims, leases, confirmations);
        False when the store cannot be written: the crawl then stops (:meth:`fail`), non-zero."""
        try:
            await self.runner.call(fn, *args)
        except StoreError as exc:
            self.fail(f"the store cannot be written: {exc}")
            return False
        return True

    def fail(self, why: str) -> None:
        """Stop the crawl because changewatch cannot go on (the store cannot be written): once,
        loudly, and so that the process exits non-zero. The spider is closed in a task of its
        own: closing waits for the items in flight, the caller among them."""
        if self.failure is not None:
            return
        self.failure = why
        self.stats.inc("failed")
        logger.critical("changewatch: stopping the crawl: %s", why)
        engine = self.crawler.engine
        if engine is not None and engine.spider is not None:
            self._closing = asyncio.ensure_future(engine.close_spider_async(reason="changewatch_failed"))

    def _count_store_retries(self) -> None:
        """A network store's transactions run again after transient failures (its ``retries``,
        when it has them: the PostgreSQL store's), as the stat ``store_retries``."""
        retries = getattr(self.runner.store, "retries", 0)
        if isinstance(retries, int) and retries > self._retries_counted:
            self.stats.inc("store_retries", retries - self._retries_counted)
            self._retries_counted = retries

    def _spider_opened(self) -> None:
        if self.crawler.settings.getbool("TWISTED_REACTOR_ENABLED", True):
            from twisted.internet import reactor

            self._sweep = start_sweep(reactor)
            self._forced = ForcedShutdown(reactor)

    def _spider_closed(self) -> None:
        if self._sweep is not None and self._sweep.running:
            self._sweep.stop()
        if self._forced is not None:
            self._forced.spider_closed()
        self._count_store_retries()  # before Scrapy logs the stats; again at the end, for the feeds' writes
        if self.failure is not None and not self._open:
            # The store never opened (so nothing was compared, logged or exported), and Scrapy
            # sends no engine_stopped for a spider closed while it opened: say it failed here.
            self.crawler.spider = None

    async def _engine_stopped(self) -> None:
        self._count_store_retries()
        if self._open:
            self._open = False
            await self.runner.release()
        if self.failure is not None or self.failed_late is not None:
            # Scrapy's crawl command exits 1 when a crawl ends without a spider (its
            # "bootstrap failed" check): the only way a component can make a crawl that ran
            # exit non-zero, which a cron job or Scrapyd must see.
            self.crawler.spider = None
