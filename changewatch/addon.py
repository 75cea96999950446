"""``changewatch.Addon``: one entry in ADDONS turns changewatch on."""

from __future__ import annotations

from scrapy.settings import BaseSettings

__all__ = ["Addon", "DOWNLOADER_MIDDLEWARE_ORDER", "PIPELINE_ORDER"]

PIPELINE_ORDER = {
    "changewatch.pipelines.FieldPipeline": 710,
    "changewatch.pipelines.EntitySetPipeline": 720,
    "changewatch.pipelines.ContentPipeline": 730,
    "changewatch.pipelines.CommitPipeline": 790,
}

# Before DefaultHeaders (400), UserAgent (500), Cookies (700) and HttpProxy (750): the vantage
# point's headers win over defaults, and its cookies and proxy are there for those to send.
DOWNLOADER_MIDDLEWARE_ORDER = {"changewatch.vantage.VantageMiddleware": 350}


def _merge(settings: BaseSettings, name: str, order: dict[str, int]) -> None:
    current = settings.getdict(name)
    settings.set(name, {**current, **{k: v for k, v in order.items() if k not in current}}, "addon")


class Addon:
    """Enables the changewatch pipelines and the vantage middleware at "addon" priority; settings
    and ``custom_settings`` still override every value."""

    def update_settings(self, settings: BaseSettings) -> None:
        _merge(settings, "ITEM_PIPELINES", PIPELINE_ORDER)
        _merge(settings, "DOWNLOADER_MIDDLEWARES", DOWNLOADER_MIDDLEWARE_ORDER)
        # A change monitor's log is read by people: dropped non-changes are routine, not warnings.
        settings.set("DEFAULT_DROPITEM_LOG_LEVEL", "DEBUG", "addon")
