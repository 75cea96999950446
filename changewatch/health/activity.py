"""What a crawl committed, as the health check needs it: how many observations since the last
check, the latest stored fetch time (the check's clock), a URL of each site (its root's
scheme), and the canaries declared (no Scrapy: the pipeline fills it, the monitor reads it)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from ..core.durations import parse_duration
from ..runtime.spider import spider_options
from ..store.health import site_of
from ..store.semantics import parse_time
from .check import Canary

__all__ = ["Activity", "parse_canary"]

logger = logging.getLogger(__name__)

EXPECTATIONS = ("change", "no_change")


def parse_canary(key: str, value: Any) -> Canary:
    """An observation's ``options["canary"]`` (``{"expect": "change", "within": "2d"}``; within in
    seconds or as a duration). ValueError says what is wrong.

    >>> parse_canary("k", {"expect": "no_change", "within": "2d"})
    Canary(key='k', expect='no_change', within=172800.0)
    """
    if not isinstance(value, dict) or set(value) != {"expect", "within"}:
        raise ValueError(f"canary {value!r}: expected {{expect: change|no_change, within: DURATION}}")
    if value["expect"] not in EXPECTATIONS:
        raise ValueError(f"canary expect {value['expect']!r}: expected change or no_change")
    return Canary(key, value["expect"], parse_duration(value["within"]))


@dataclass
class Activity:
    commits: int = 0
    latest: str | None = None
    sites: dict[str, str] = field(default_factory=dict)
    canaries: dict[str, tuple[Canary, str]] = field(default_factory=dict)
    _refused: set[str] = field(default_factory=set)

    def declared(self, spider: Any) -> None:
        """The canaries *spider* declares (its ``changewatch_canaries()``: key → (url, declaration);
        the watch spider's come from its watchlist), beside those its items' options carry."""
        for key, (url, canary) in dict(spider_options(spider).canaries()).items():
            self._canary(str(key), site_of(str(url)), canary)

    def _canary(self, key: str, site: str, canary: Any) -> None:
        try:
            self.canaries[key] = (parse_canary(key, canary), site)
        except ValueError as exc:
            if key not in self._refused:  # an item of a per-site spider: said once, not per run
                self._refused.add(key)
                logger.warning("changewatch: key %r: not a canary: %s", key, exc)

    def committed(self, key: str, url: str, observed_at: str, canary: Any = None) -> None:
        """One observation of *key* committed, fetched at *observed_at* as stored."""
        self.commits += 1
        if self.latest is None or parse_time(observed_at) > parse_time(self.latest):
            self.latest = observed_at
        site = site_of(url)
        self.sites.setdefault(site, url)
        if canary is not None:
            self._canary(key, site, canary)
