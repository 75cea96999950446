"""``changewatch.Addon``: one entry in ADDONS turns changewatch on; it enables
:class:`ChangewatchRuntime` (:mod:`.runtime`), the extension that composes the features. This
package sits above every feature: nothing in changewatch imports it but the package root."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy.settings import BaseSettings

from .defaults import SAFETY_DEFAULTS, apply_safety_defaults

if TYPE_CHECKING:
    from .runtime import ChangewatchRuntime

__all__ = ["DOWNLOADER_MIDDLEWARE_ORDER", "EXTENSION_ORDER", "PIPELINE_ORDER", "RENDER_HANDLER", "SAFETY_DEFAULTS",
           "SPIDER_CONTRACT_ORDER", "SPIDER_MIDDLEWARE_ORDER", "Addon", "ChangewatchRuntime"]

PIPELINE_ORDER = {
    # Late: the user's own pipelines before 790 see their items as they made them, those after
    # it see change records.
    "changewatch.pipelines.ChangewatchPipeline": 790,
}
EXTENSION_ORDER = {
    "changewatch.addon.ChangewatchRuntime": 0,
    # watching the watcher: the health check when the crawl has done its work (docs/health.md)
    "changewatch.health.monitor.HealthMonitor": 10,
    # a line of progress on long runs, beside Scrapy's LogStats (CHANGEWATCH_PROGRESS_INTERVAL)
    "changewatch.runtime.ProgressLog": 0,
}
DOWNLOADER_MIDDLEWARE_ORDER = {
    # Before every other (Scrapy's first is OffsiteMiddleware, 50): its process_exception runs last,
    # once RetryMiddleware gave up, and sees why a request failed for good.
    "changewatch.middlewares.FetchFailureMiddleware": 10,
    # Before DefaultHeaders (400), UserAgent (500), Cookies (700) and HttpProxy (750): the vantage
    # point's headers win over defaults, and its cookies and proxy are there for those to send.
    "changewatch.middlewares.VantageMiddleware": 350,
    # After Retry (550), before Redirect (600): every request, redirects included, is checked
    # (scheme, credentials, address literals) before it leaves; refusals are never retried.
    "changewatch.guard.SSRFGuardMiddleware": 560,
    # After the guard (a refused URL is neither re-checked nor rendered), before conditional requests
    # (which leave a rendered request alone): decides which requests a browser renders.
    "changewatch.middlewares.RenderMiddleware": 940,
    # Between HttpCacheMiddleware (900) and the download: a cache entry being revalidated carries
    # the cache's own validators, which this middleware then leaves alone.
    "changewatch.middlewares.ConditionalRequestMiddleware": 950,
}
RENDER_HANDLER = "changewatch.render.RenderDownloadHandler"
SCRAPY_META_REFRESH = "scrapy.downloadermiddlewares.redirect.MetaRefreshMiddleware"
META_REFRESH = "changewatch.middlewares.MetaRefreshMiddleware"  # in SCRAPY_META_REFRESH's place
#: Scrapy's downloader middlewares changewatch's stand in for, in their place: a meta refresh read
#: from the head of a page only (middlewares/metarefresh.py); a redirect loop and a compression
#: bomb noted as why a request failed (middlewares/dropped.py); robots.txt obeyed by every request
#: that waited for it, not only the first (middlewares/robots.py)
STAND_INS = {
    SCRAPY_META_REFRESH: META_REFRESH,
    "scrapy.downloadermiddlewares.redirect.RedirectMiddleware": "changewatch.middlewares.RedirectMiddleware",
    "scrapy.downloadermiddlewares.httpcompression.HttpCompressionMiddleware":
        "changewatch.middlewares.HttpCompressionMiddleware",
    "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": "changewatch.middlewares.RobotsTxtMiddleware",
}
SPIDER_MIDDLEWARE_ORDER = {
    # an answer with an error status, before HttpErrorMiddleware (50) keeps it from the callback; and
    # last, a response that reached the callback: a crawl none of whose requests did says why
    "changewatch.middlewares.ArrivedMiddleware": 45,
    "changewatch.middlewares.ReachedMiddleware": 990,
    "changewatch.middlewares.ConditionalSpiderMiddleware": 950,
    # requests of keys that are not due are never made (docs/schedule.md)
    "changewatch.middlewares.ScheduleMiddleware": 955,
    "changewatch.middlewares.RedeliveryMiddleware": 960,
    # which request each item came from (-a calibrate=N repeats it, a 304's too), and a calibration
    # load's page leads to no requests: the normal load's did
    "changewatch.middlewares.CalibrationMiddleware": 940,
}

#: ``scrapy check`` of a per-site spider: @site_path (a path on its -a site=URL) and @observes
SPIDER_CONTRACT_ORDER = {"changewatch.contracts.SitePathContract": 10, "changewatch.contracts.ObservesContract": 10}


class Addon:
    """Enables the changewatch pipelines and middlewares and brings the safety defaults
    (:data:`SAFETY_DEFAULTS`), all at "addon" priority; settings and ``custom_settings`` still
    override every value."""

    @classmethod
    def update_pre_crawler_settings(cls, settings: BaseSettings) -> None:
        # The process's settings, before any crawler or reactor: the resolver Scrapy installs
        # (TWISTED_DNS_RESOLVER) and what a spider reads as it is built (the watchlist's fetch:
        # USER_AGENT) come from here; update_settings runs too late for both.
        apply_safety_defaults(settings)
        # `scrapy check` loads its contracts from the process's settings before any crawler
        # exists (update_settings runs per crawler, too late for them).
        for path, order in SPIDER_CONTRACT_ORDER.items():
            settings["SPIDER_CONTRACTS"].set(path, order, "addon")

    def update_settings(self, settings: BaseSettings) -> None:
        # again on the crawler's settings: the add-on may be enabled in a spider's custom_settings
        # only, and a spider's CHANGEWATCH_CONTACT belongs in its User-Agent
        apply_safety_defaults(settings)
        for name, order in (("ITEM_PIPELINES", PIPELINE_ORDER), ("DOWNLOADER_MIDDLEWARES", DOWNLOADER_MIDDLEWARE_ORDER),
                            ("SPIDER_MIDDLEWARES", SPIDER_MIDDLEWARE_ORDER), ("EXTENSIONS", EXTENSION_ORDER)):
            # Into the component dict, at "addon" priority: the user's own entries (settings,
            # -s on the command line, custom_settings) stay, and win for the same component.
            components = settings[name]
            for path, priority in order.items():
                components.set(path, priority, "addon")
        # changewatch's stand-ins (STAND_INS), in Scrapy's own places; a project that names Scrapy's
        # in DOWNLOADER_MIDDLEWARES keeps it.
        downloader, base = settings["DOWNLOADER_MIDDLEWARES"], settings["DOWNLOADER_MIDDLEWARES_BASE"]
        for scrapys, ours in STAND_INS.items():
            if scrapys not in downloader and base.get(scrapys) is not None:
                downloader.set(scrapys, None, "addon")
                downloader.set(ours, base.get(scrapys), "addon")
        # Rendered pages (changewatch.render): Scrapy's HTTP/1.1 handler for every request that is
        # not rendered; scrapy-playwright and its browser are loaded and started with the first render.
        if settings.getbool("TWISTED_REACTOR_ENABLED", True):
            for scheme in ("http", "https"):
                settings["DOWNLOAD_HANDLERS"].set(scheme, RENDER_HANDLER, "addon")
        # CSV feeds of change records: one header with every member, nested values as JSON (the
        # user's own FEED_EXPORTERS["csv"] wins: set at "addon" priority)
        settings["FEED_EXPORTERS"].set("csv", "changewatch.feeds.ChangeRecordCsvExporter", "addon")


def __getattr__(name: str) -> Any:
    if name == "ChangewatchRuntime":  # imports every feature: only when a crawl builds it
        from .runtime import ChangewatchRuntime

        return ChangewatchRuntime
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
