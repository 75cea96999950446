"""Item pipelines: :class:`ChangewatchPipeline`, the one comparison step.

``FieldPipeline``, ``EntitySetPipeline``, ``ContentPipeline`` and ``CommitPipeline`` were four
steps of one comparison; they are deprecated names now (a settings file that lists them keeps
working: the first three do nothing, CommitPipeline is the comparison step).
"""

from __future__ import annotations

from typing import Any

from scrapy.crawler import Crawler

from .._deprecated import warn_moved
from .compare import ChangewatchPipeline

__all__ = ["ChangewatchPipeline"]


class CommitPipeline(ChangewatchPipeline):
    """Deprecated name of :class:`ChangewatchPipeline`."""

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> ChangewatchPipeline:
        warn_moved("changewatch.pipelines.CommitPipeline", "changewatch.pipelines.ChangewatchPipeline")
        return super().from_crawler(crawler)


class _MergedStep:
    """A former step of the comparison, now part of ChangewatchPipeline: passes items on."""

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> _MergedStep:
        warn_moved(f"changewatch.pipelines.{cls.__name__}",
                   "nothing: ChangewatchPipeline does its work (remove it from ITEM_PIPELINES)")
        return cls()

    def process_item(self, item: Any) -> Any:
        return item


class FieldPipeline(_MergedStep):
    """Deprecated: field values are normalised by ChangewatchPipeline."""


class EntitySetPipeline(_MergedStep):
    """Deprecated: entity sets are keyed by ChangewatchPipeline."""


class ContentPipeline(_MergedStep):
    """Deprecated: page text is normalised by ChangewatchPipeline."""
