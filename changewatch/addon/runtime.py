"""``ChangewatchRuntime``: the one extension that composes a crawl's changewatch features.

It is the :class:`changewatch.runtime.services.CrawlServices` every component finds, built from
the settings parsed once, with the features' own checks run here, at start, before anything is
fetched: the store's URI and class, the comparisons, the notification URLs, the summary endpoint
against the SSRF policy, and that no changewatch component was left out of the user's component
settings without its ``*_ENABLED`` setting saying so. It lives above every feature: no feature
imports it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scrapy.crawler import Crawler
from scrapy.settings import BaseSettings
from scrapy.utils.conf import build_component_list
from scrapy.utils.misc import load_object

from ..config import ChangewatchConfig, ConfigError, error_message, said_at_start
from ..core.comparisons import ComparisonError, load_comparisons
from ..guard.resolver import installed_guard
from ..health.activity import Activity
from ..notify.crawl import CrawlNotifications
from ..notify.setting import notify_routes
from ..runtime.services import CrawlServices, origin_of
from ..store import BUILTIN_STORE_SCHEMES, StoreError, store_from_uri
from ..store.runner import StoreRunner
from ..summary.crawl import check_summary_url
from .robotslog import quiet_robots_download_errors
from .suffixes import use_bundled_suffix_list

__all__ = ["ChangewatchRuntime", "check_components"]

#: (setting, component, the setting that turns it off, or None: it cannot be left out)
REQUIRED_COMPONENTS: tuple[tuple[str, str, str | None], ...] = (
    ("ITEM_PIPELINES", "changewatch.pipelines.ChangewatchPipeline", None),
    ("SPIDER_MIDDLEWARES", "changewatch.middlewares.RedeliveryMiddleware", None),
    ("SPIDER_MIDDLEWARES", "changewatch.middlewares.ConditionalSpiderMiddleware", None),
    ("SPIDER_MIDDLEWARES", "changewatch.middlewares.ScheduleMiddleware", None),
    # without them a crawl whose every request failed would exit 0
    ("SPIDER_MIDDLEWARES", "changewatch.middlewares.ArrivedMiddleware", None),
    ("SPIDER_MIDDLEWARES", "changewatch.middlewares.ReachedMiddleware", None),
    ("DOWNLOADER_MIDDLEWARES", "changewatch.middlewares.FetchFailureMiddleware", None),
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


def _class(component: Any) -> Any:
    if not isinstance(component, str):
        return component
    try:
        return load_object(component)
    except (ImportError, AttributeError, ValueError, NameError):
        return None  # not ours to report: Scrapy says so when it builds the component


class ChangewatchRuntime(CrawlServices):
    """Extension (``EXTENSIONS``; the add-on enables it). Components find it as :class:`CrawlServices`."""

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ChangewatchRuntime:
        with said_at_start():
            return cls._build(crawler)

    @classmethod
    def _build(cls, crawler: Crawler) -> ChangewatchRuntime:
        config = ChangewatchConfig.from_settings(crawler.settings)
        check_components(crawler.settings)
        _check_store_scheme(config.store, {**BUILTIN_STORE_SCHEMES, **config.store_schemes})
        check_summary_url(config)
        routes = notify_routes(crawler.settings)  # Apprise knows its URLs' schemes
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
        runtime.activity = Activity()
        runtime.notifications = CrawlNotifications.from_crawler(crawler, runtime, routes)
        runtime.connect()
        use_bundled_suffix_list()
        quiet_robots_download_errors()
        return runtime

    def trust_origin(self, url: str) -> None:
        """Let this crawl's SSRF guard through to the origin (scheme, host, port) of *url*: for
        a local site that changewatch itself serves (the example spiders' fixtures in ``scrapy
        check``). Nothing else is trusted by it."""
        origin = origin_of(url)
        self.trusted_origins.add(origin)
        if self.crawler.settings.getbool("TWISTED_REACTOR_ENABLED", True):
            from twisted.internet import reactor

            guard = installed_guard(reactor)
            if guard is not None:  # connections resolve through it, IP literals too
                guard.trust(origin[1], origin[2] or (443 if origin[0] == "https" else 80))


def _check_store_scheme(uri: str, schemes: Mapping[str, str]) -> None:
    scheme = uri.partition(":")[0].lower()
    if scheme not in schemes:
        known = ", ".join(sorted(schemes))
        raise ConfigError(error_message("CHANGEWATCH_STORE", uri, f"a store URI whose scheme is one of: {known} "
                                        "(CHANGEWATCH_STORE_SCHEMES adds others)"))
