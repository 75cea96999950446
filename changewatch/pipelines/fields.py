"""FieldPipeline: normalise tracked field values for value-by-value comparison."""

from __future__ import annotations

from typing import Any

from scrapy.crawler import Crawler

from ..core.values import normalise_fields
from ..runtime.config import ChangewatchConfig
from ..runtime.stats import Stats
from .adopt import Adopter


class FieldPipeline:
    """Adopts any observation-like item as an :class:`~changewatch.items.Observation` and
    normalises its fields ("89.00" = 89, schema.org enums without scheme/host, whitespace), each
    by its kind (``options["kinds"]``: price, availability, date…)."""

    def __init__(self, stats: Stats, adopt: Adopter):
        self.stats = stats
        self.adopt = adopt

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> FieldPipeline:
        # reads no setting itself, but a bad changewatch setting must stop the crawl whichever
        # components are enabled
        ChangewatchConfig.from_settings(crawler.settings)
        return cls(Stats(crawler, "fields"), Adopter.of(crawler))

    def process_item(self, item: Any) -> Any:
        obs = self.adopt(item)
        if obs is None:
            return item
        if obs.fields is not None and obs.error is None:
            try:
                obs.digest["norm_fields"] = normalise_fields(obs.fields, obs.options.get("kinds"))
            except ValueError as exc:  # an unknown kind: the spider's mistake, reported as an error
                obs.error = f"fields: {exc}"
                self.stats.inc("bad_kind")
                return obs
            self.stats.inc("observed")
        return obs
