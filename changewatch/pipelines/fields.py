"""FieldPipeline: normalise tracked field values for value-by-value comparison."""

from __future__ import annotations

from typing import Any

from scrapy.crawler import Crawler

from ..core.fields import normalise_value
from ..stats import Stats
from .adopt import Adopter


class FieldPipeline:
    """Adopts any observation-like item as an :class:`~changewatch.items.Observation` and
    normalises its fields ("89.00" = 89, schema.org enums without scheme/host, whitespace)."""

    def __init__(self, stats: Stats, adopt: Adopter):
        self.stats = stats
        self.adopt = adopt

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> FieldPipeline:
        return cls(Stats(crawler, "fields"), Adopter.of(crawler))

    def process_item(self, item: Any) -> Any:
        obs = self.adopt(item)
        if obs is None:
            return item
        if obs.fields is not None and obs.error is None:
            obs.digest["norm_fields"] = {name: normalise_value(v) for name, v in obs.fields.items()}
            self.stats.inc("observed")
        return obs
