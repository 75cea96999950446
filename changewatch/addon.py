"""``changewatch.Addon``: one entry in ADDONS turns changewatch on."""

from __future__ import annotations

from scrapy.settings import BaseSettings

__all__ = ["DOWNLOADER_MIDDLEWARE_ORDER", "Addon", "PIPELINE_ORDER"]

PIPELINE_ORDER = {
    "changewatch.pipelines.FieldPipeline": 710,
    "changewatch.pipelines.EntitySetPipeline": 720,
    "changewatch.pipelines.ContentPipeline": 730,
    "changewatch.pipelines.CommitPipeline": 790,
}
DOWNLOADER_MIDDLEWARE_ORDER = {
    "changewatch.guard.SSRFGuardMiddleware": 560,
}


class Addon:
    """Enables the changewatch pipelines and the SSRF guard middleware at "addon" priority;
    settings and ``custom_settings`` still override every value."""

    def update_settings(self, settings: BaseSettings) -> None:
        settings.set("ITEM_PIPELINES", {**settings.getdict("ITEM_PIPELINES"), **{
            k: v for k, v in PIPELINE_ORDER.items() if k not in settings.getdict("ITEM_PIPELINES")}}, "addon")
        # Added to the dict itself, not by replacing it at "addon" priority: a project that sets
        # DOWNLOADER_MIDDLEWARES for its own middlewares keeps the SSRF guard unless it names it.
        middlewares = settings["DOWNLOADER_MIDDLEWARES"]
        for path, order in DOWNLOADER_MIDDLEWARE_ORDER.items():
            if path not in middlewares:
                middlewares.set(path, order, "addon")
        # A change monitor's log is read by people: dropped non-changes are routine, not warnings.
        settings.set("DEFAULT_DROPITEM_LOG_LEVEL", "DEBUG", "addon")
