"""``ChangewatchRuntime``: the one extension that holds a crawl's changewatch state.

Every changewatch component finds it with ``crawler.get_extension`` (:meth:`ChangewatchRuntime.of`):
the settings parsed once, the store (through its runner), the comparisons, the worker pool, which
response each item came from, and this process's lease on the changes it exports. Building it
checks everything that could make the crawl fail open: every setting, the reactor, and that no
changewatch component was left out of the user's component settings without its ``*_ENABLED``
setting saying so. A store that cannot be written mid-crawl stops the crawl (:meth:`fail`) and
the process exits non-zero.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urlsplit

from scrapy import signals
from scrapy.crawler import Crawler
from scrapy.exceptions import CloseSpider
from scrapy.settings import BaseSettings
from scrapy.utils.conf import build_component_list
from scrapy.utils.misc import load_object
from twisted.internet.task import LoopingCall

from ..core.comparisons import Comparison, ComparisonError, load_comparisons
from ..core.diff import DiffOptions
from ..health.activity import Activity
from ..learning import LearningError, parse_calibrate, parse_forget
from ..notify.crawl import CrawlNotifications
from ..store import RoutingStore, StoreError, store_from_uri
from ..store.leases import new_owner
from ..store.records import Lease
from ..store.runner import StoreRunner, spider_name
from .config import ChangewatchConfig, ConfigError
from .housekeeping import Housekeeper
from .origins import ItemRequests, ResponseOrigins
from .parsers import BadValue, Bool
from .spider import spider_options
from .stats import Stats
from .sweep import start_sweep
from .workers import WorkerPool

__all__ = ["ChangewatchRuntime", "check_components"]

logger = logging.getLogger(__name__)

#: (setting, component, the setting that turns it off, or None: it cannot be left out)
REQUIRED_COMPONENTS: tuple[tuple[str, str, str | None], ...] = (
    ("ITEM_PIPELINES", "changewatch.pipelines.ChangewatchPipeline", None),
    ("SPIDER_MIDDLEWARES", "changewatch.middlewares.RedeliveryMiddleware", None),
    ("SPIDER_MIDDLEWARES", "changewatch.middlewares.ConditionalSpiderMiddleware", None),
    ("SPIDER_MIDDLEWARES", "changewatch.middlewares.ScheduleMiddleware", None),
    ("DOWNLOADER_MIDDLEWARES", "changewatch.middlewares.VantageMiddleware", None),
    ("DOWNLOADER_MIDDLEWARES", "changewatch.guard.SSRFGuardMiddleware", "CHANGEWATCH_SSRF_ENABLED"),
    ("DOWNLOADER_MIDDLEWARES", "changewatch.middlewares.ConditionalRequestMiddleware",
     "CHANGEWATCH_CONDITIONAL_ENABLED"),
    ("EXTENSIONS", "changewatch.health.monitor.HealthMonitor", "CHANGEWATCH_HEALTH_ENABLED"),
    # without it a watch's `render` would be fetched without rendering, silently
    ("DOWNLOADER_MIDDLEWARES", "changewatch.middlewares.RenderMiddleware", None),
)


def check_components(settings: BaseSettings) -> None:
    """Raise ConfigError when a changewatch component is missing from the crawl: removed from its
    component setting (``None``) without the ``*_ENABLED`` setting that turns it off. A missing
    comparison step would export raw observations, a missing delivery step would re-export every
    change on every run, a missing guard would fetch what it should refuse. Also when one is
    enabled twice (a user's subclass beside ours): the second never sees what the first took."""
    enabled: dict[str, list[type]] = {}
    for setting, path, switch in REQUIRED_COMPONENTS:
        if switch is not None and not settings.getbool(switch, True):
            continue
        if setting not in enabled:
            enabled[setting] = [_class(c) for c in build_component_list(_components(settings, setting))]
        required = load_object(path)
        found = [cls for cls in enabled[setting] if isinstance(cls, type) and issubclass(cls, required)]
        if not found:
            how = f"set {switch} = False to turn it off" if switch else "it cannot be turned off on its own"
            raise ConfigError(f"{setting} lacks {path} (or a subclass), which changewatch.Addon enables: {how}; "
                              "to turn changewatch off, remove changewatch.Addon from ADDONS")
        if len(found) > 1:
            names = ", ".join(f"{cls.__module__}.{cls.__qualname__}" for cls in found)
            raise ConfigError(f"{setting} enables {path} twice ({names}): keep one, and set the other to None "
                              f"(a subclass stands for {path} when {path} is None)")


def _components(settings: BaseSettings, setting: str) -> BaseSettings:
    """*setting* as Scrapy builds it: of two paths naming one class, the last one stands."""
    try:
        return settings.get_component_priority_dict_with_base(setting)
    except ImportError:  # not ours to report: Scrapy says so when it builds the components
        return settings.getwithbase(setting)


def origin_of(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    return parts.scheme.lower(), (parts.hostname or "").lower(), parts.port


def _class(component: Any) -> Any:
    if not isinstance(component, str):
        return component
    try:
        return load_object(component)
    except (ImportError, AttributeError, ValueError, NameError):
        return None  # not ours to report: Scrapy says so when it builds the component


class ChangewatchRuntime:
    """Extension (``EXTENSIONS``; the add-on enables it). Components call :meth:`of`."""

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
        self.lease = Lease(new_owner(), config.delivery_lease)
        self.diff = DiffOptions(context=config.diff_context, max_lines=config.diff_max_lines)
        self.stats = Stats(crawler, "runtime")
        self.failure: str | None = None
        self._closing: asyncio.Future[None] | None = None
        self._open = False
        self.trusted_origins: set[tuple[str, str, int | None]] = set()
        self._retries_counted = 0
        #: what this process committed, for the health check (changewatch.health)
        self.activity = Activity()
        self.notifications = CrawlNotifications.from_crawler(crawler, self)
        #: ``-a force=1``: fetch every watch, due or not (read when the crawl opens)
        self.force = False
        self.housekeeper = Housekeeper(self)
        self._sweep: LoopingCall | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ChangewatchRuntime:
        config = ChangewatchConfig.from_settings(crawler.settings)
        check_components(crawler.settings)
        try:
            store = store_from_uri(config.store, config.store_schemes,
                                   {"synchronous": config.store_synchronous, "timeout": config.store_timeout,
                                    "retry_time": config.store_retry_time})
        except StoreError as exc:
            raise ConfigError(f"CHANGEWATCH_STORE = {config.store!r}: {exc}") from None
        try:
            comparisons = load_comparisons(config.comparisons, merge=False)
        except ComparisonError as exc:
            raise ConfigError(f"CHANGEWATCH_COMPARISONS: {exc}") from None
        runtime = cls(crawler, config, StoreRunner(store), comparisons)
        crawler.signals.connect(runtime._engine_stopped, signal=signals.engine_stopped)
        crawler.signals.connect(runtime._spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(runtime._spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(runtime.housekeeper.closed, signal=signals.spider_closed)
        return runtime

    def trust_origin(self, url: str) -> None:
        """Let this crawl's SSRF guard through to the origin (scheme, host, port) of *url*: for
        a local site that changewatch itself serves (the example spiders' fixtures in ``scrapy
        check``). Nothing else is trusted by it."""
        origin = origin_of(url)
        self.trusted_origins.add(origin)
        if self.crawler.settings.getbool("TWISTED_REACTOR_ENABLED", True):
            from twisted.internet import reactor

            from ..guard.resolver import installed_guard

            guard = installed_guard(reactor)
            if guard is not None:  # connections resolve through it, IP literals too
                guard.trust(origin[1], origin[2] or (443 if origin[0] == "https" else 80))

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

    @classmethod
    def of(cls, crawler: Crawler) -> ChangewatchRuntime:
        """The crawler's runtime; ConfigError when a component was enabled without it."""
        runtime = crawler.get_extension(cls)
        if runtime is None:
            ChangewatchConfig.from_settings(crawler.settings)  # a bad value is the first thing to say
            raise ConfigError("changewatch components need the changewatch.runtime.ChangewatchRuntime extension: "
                              "enable changewatch.Addon in ADDONS (it adds it), or add the extension to EXTENSIONS")
        return runtime

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

    def _spider_closed(self) -> None:
        if self._sweep is not None and self._sweep.running:
            self._sweep.stop()
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
        if self.failure is not None:
            # Scrapy's crawl command exits 1 when a crawl ends without a spider (its
            # "bootstrap failed" check): the only way a component can make a crawl that ran
            # exit non-zero, which a cron job or Scrapyd must see.
            self.crawler.spider = None
