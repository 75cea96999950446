"""``changewatch.Addon``: one entry in ADDONS turns changewatch on."""

from __future__ import annotations

from scrapy.settings import BaseSettings

__all__ = ["Addon", "PIPELINE_ORDER"]

PIPELINE_ORDER = {
    "changewatch.pipelines.FieldPipeline": 710,
    "changewatch.pipelines.EntitySetPipeline": 720,
    "changewatch.pipelines.ContentPipeline": 730,
    "changewatch.pipelines.CommitPipeline": 790,
}


class Addon:
    """Enables the changewatch pipelines at "addon" priority; settings and ``custom_settings``
    still override every value."""

    def update_settings(self, settings: BaseSettings) -> None:
        settings.set("ITEM_PIPELINES", {**settings.getdict("ITEM_PIPELINES"), **{
            k: v for k, v in PIPELINE_ORDER.items() if k not in settings.getdict("ITEM_PIPELINES")}}, "addon")
        # A change monitor's log is read by people: dropped non-changes are routine, not warnings.
        settings.set("DEFAULT_DROPITEM_LOG_LEVEL", "DEBUG", "addon")
