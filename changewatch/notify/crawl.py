"""Notifications in a crawl: each change's destinations decided as it is committed (CHANGEWATCH_NOTIFY
and the watch's ``notify:``), and, once the spider has closed, one message per destination with
what it has not been sent (this run's changes and any an earlier run could not deliver). A
destination that still fails after its retries is an ERROR line, the stat
``changewatch/notify/failed`` and a non-zero exit; its changes stay pending in the store for the
next run or ``changewatch notify --resend``. Built by ``changewatch.addon.ChangewatchRuntime``."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.crawler import Crawler

from ..core.destinations import NotifyRoutes
from ..runtime.stats import Stats
from ..store import RoutingStore, StoreError
from ..store.options import uri_argument
from ..watchlist import NotifyRule, Watch
from .notifier import Notifier
from .routing import FieldValues, Router
from .sender import SendPolicy

if TYPE_CHECKING:
    from ..core.observation import Observation
    from ..runtime.services import CrawlServices

__all__ = ["CrawlNotifications", "site_watches", "watch_rules"]

logger = logging.getLogger(__name__)

#: what each count of a round of sending is called in the stats
_NOTIFY_STATS = {"messages": "sent", "changes": "changes_sent", "failed": "failed", "attempts": "attempts",
                 "unknown": "unknown_destination", "routed": "routed"}


def watch_rules(spider: Any) -> dict[str, tuple[NotifyRule, ...]]:
    """The watch spider's ``notify:`` rules by key; those of a watchlist fetched by URL guarded by
    the SSRF policy. Other spiders have none (they use CHANGEWATCH_NOTIFY)."""
    rules: dict[str, tuple[NotifyRule, ...]] = {}
    fetched = bool(getattr(spider, "watchlist_fetched", False))
    for watch in getattr(spider, "watches", None) or ():
        notify = getattr(watch, "notify", ())
        if notify:
            rules[watch.key] = tuple(r.guarded() for r in notify) if fetched else tuple(notify)
    return rules


def site_watches(spider: Any) -> dict[str, Watch]:
    """The watch spider's site watches by key (their pages' ``notify:`` rules are their page
    options'); those of a watchlist fetched by URL with every rule guarded by the SSRF policy."""
    fetched = bool(getattr(spider, "watchlist_fetched", False))
    sites: dict[str, Watch] = {}
    for watch in getattr(spider, "watches", None) or ():
        if getattr(watch, "site", None) is None:
            continue
        if fetched:
            rules = tuple(replace(r, watch=_guarded(r.watch)) for r in watch.rules)
            watch = replace(_guarded(watch), rules=rules)
        sites[watch.key] = watch
    return sites


def _guarded(watch: Watch) -> Watch:
    return replace(watch, notify=tuple(r.guarded() for r in watch.notify))


class CrawlNotifications:
    def __init__(self, crawler: Crawler, runtime: CrawlServices, routes: NotifyRoutes):
        self.crawler = crawler
        self.runtime = runtime
        self.routes = routes
        self.stats = Stats(crawler, "notify")
        self.router: Router | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler, runtime: CrawlServices, routes: NotifyRoutes) -> CrawlNotifications:
        notifications = cls(crawler, runtime, routes)
        crawler.signals.connect(notifications._spider_closed, signal=signals.spider_closed)
        return notifications

    def prepare(self) -> str | None:
        """Build the routes once the spider (and its watchlist) exists; why the crawl cannot
        notify (its store keeps no delivery state), or None."""
        router = Router(self.routes, watch_rules(self.crawler.spider), site_watches(self.crawler.spider))
        self.router = router if router else None
        store = self.runtime.runner.store
        if self.router is not None and not isinstance(store, RoutingStore):
            return (f"the store {store!r} cannot keep notifications' delivery state: its backend does not implement "
                    "changewatch.store.RoutingStore (notifications are configured)")
        return None

    def targets(self, obs: Observation, record: dict[str, Any] | None) -> tuple[tuple[str, str], ...]:
        """The destinations (id, shown) of a change about to be committed; the conditions that
        chose some of them are added to *record* (``conditions``), which is logged as it is then."""
        if self.router is None or record is None:
            return ()
        kinds = obs.options.get("kinds") if isinstance(obs.options, Mapping) else None
        routed = self.router.route(record, FieldValues(record, obs.fields, kinds))
        if routed.conditions:
            record["conditions"] = list(routed.conditions)
        return tuple((d.id, d.shown) for d in routed.destinations)

    def committed(self, outcome_notify: tuple[tuple[str, str], ...]) -> None:
        """Count the notifications a commit wrote (a recomputed outcome is counted once)."""
        self.stats.inc(_NOTIFY_STATS["routed"], len(outcome_notify))

    async def _spider_closed(self) -> None:
        runtime = self.runtime
        if self.router is None or not runtime.is_open or os.environ.get("SCRAPY_CHECK"):
            return
        if runtime.failure is not None:
            logger.warning("changewatch: no notifications sent: the crawl is stopping (%s); its changes stay pending",
                           runtime.failure)
            return
        config = runtime.config
        store = runtime.runner.store
        assert isinstance(store, RoutingStore)  # prepare() said so otherwise
        policy = SendPolicy(config.notify_timeout, config.notify_retries, config.notify_retry_time,
                            config.guard.policy)
        notifier = Notifier(store, runtime.runner.call, self.router.destinations, policy, runtime.lease.owner,
                            max_chars=config.notify_max_chars, store_name=uri_argument(config.store))
        try:
            report = await notifier.run(spider=runtime.spider)
        except StoreError as exc:  # the changes stay pending in whatever state the store kept
            logger.error("changewatch: notifications not sent: the store cannot be used: %s", exc)
            runtime.exit_nonzero(f"notifications not sent: {exc}")
            return
        self.stats.inc(_NOTIFY_STATS["messages"], len(report.sent))
        self.stats.inc(_NOTIFY_STATS["changes"], sum(report.sent.values()))
        self.stats.inc(_NOTIFY_STATS["failed"], len(report.failed))
        self.stats.inc(_NOTIFY_STATS["attempts"], sum(report.attempts.values()))
        self.stats.inc(_NOTIFY_STATS["unknown"], sum(report.unknown.values()))
        if report.failed:
            runtime.exit_nonzero(f"{len(report.failed)} notification destination(s) failed: "
                                 + "; ".join(f"{shown}: {why}" for shown, why in report.failed.items()))
