"""Adopting an item as an Observation, with the response it came from."""

from __future__ import annotations

from typing import Any

from scrapy.crawler import Crawler

from ..items import Observation, as_observation
from ..middlewares.origins import ResponseOrigins

__all__ = ["Adopter"]


class Adopter:
    """Turns an observation-like item of any kind into an :class:`Observation` (the first
    changewatch pipeline to see it does), carrying over the validators of the response the
    spider made it from: the store keeps them with the observation, in one transaction."""

    def __init__(self, origins: ResponseOrigins):
        self.origins = origins

    @classmethod
    def of(cls, crawler: Crawler) -> Adopter:
        return cls(ResponseOrigins.of(crawler))

    def __call__(self, item: Any) -> Observation | None:
        origin = self.origins.pop(item)  # for every item: the others need no origin either
        obs = as_observation(item)
        if obs is not None and origin is not None:
            obs.digest["origin"] = origin
        return obs
