"""EntitySetPipeline: key the entities of a page by canonical URL."""

from __future__ import annotations

from typing import Any

from scrapy.crawler import Crawler

from ..core.entities import build_entities
from ..runtime.config import ChangewatchConfig
from ..runtime.stats import Stats
from .adopt import Adopter


class EntitySetPipeline:
    """Canonicalises entity keys (w3lib + tracking parameters stripped, per-watch
    ``keep_params``/``drop_params``) and normalises entity fields."""

    def __init__(self, stats: Stats, adopt: Adopter):
        self.stats = stats
        self.adopt = adopt

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> EntitySetPipeline:
        # reads no setting itself, but a bad changewatch setting must stop the crawl whichever
        # components are enabled
        ChangewatchConfig.from_settings(crawler.settings)
        return cls(Stats(crawler, "entities"), Adopter.of(crawler))

    def process_item(self, item: Any) -> Any:
        obs = self.adopt(item)
        if obs is None:
            return item
        if obs.entities is not None and obs.error is None:
            try:
                entities = build_entities(obs.entities, base_url=obs.url,
                                          keep_params=obs.options.get("keep_params") or (),
                                          drop_params=obs.options.get("drop_params") or (),
                                          kinds=obs.options.get("kinds"))
            except ValueError as exc:  # an unknown kind: the spider's mistake, reported as an error
                obs.error = f"entities: {exc}"
                self.stats.inc("bad_kind")
                return obs
            obs.digest["entities"] = entities
            self.stats.inc("observed")
            self.stats.inc("duplicates", len(obs.entities) - len(entities))
        return obs
